// Package containerimage builds ley's container image without a container engine:
// the one static ley binary on an empty (scratch) base, assembled with
// go-containerregistry into a tarball that `docker load`, `crane push` and
// `skopeo copy docker-archive:` take, or into an OCI image layout
// directory. `make image` runs it through internal/containerimage/mkimage;
// docs/deploy/Dockerfile builds the same image for teams that have Docker.
//
// # Outline
//
//   - [BuildBinary] compiles ./cmd/ley with CGO_ENABLED=0, -trimpath and
//     stripped symbols for linux/GOARCH, and checks the result with
//     [CheckStatic] (no program interpreter, no shared libraries: the
//     SQLite store is modernc.org/sqlite, pure Go).
//   - [New] assembles the image from such a binary: one layer holding
//     /ley (root-owned, 0755), /etc/passwd and /etc/group naming the user
//     ley (uid and gid [UID], [GID] = 65532), the CA bundle at [CACertsPath]
//     (for TLS to Postgres, to remote directors and to a profiling
//     endpoint), /data (0750, owned by ley: the embedded SQLite store's
//     default home) and /tmp (1777). The config runs /ley as 65532:65532,
//     sets LEY_DATA_DIR=/data, declares /data a volume and documents the
//     ports 8080 (HTTP API), 7070 (control) and 7100 (clients).
//   - [WriteTarball] and [WriteLayout] write it out.
//
// # Caveats
//
// The image is reproducible for a given binary and CA bundle: every time
// in it is [Config.Created] (the Unix epoch unless set). The CA bundle is
// the build machine's ([FindCACerts]), so it is as fresh as that machine's
// ca-certificates package. Only linux images are built; the architecture
// is read from the binary's ELF header.
package containerimage
