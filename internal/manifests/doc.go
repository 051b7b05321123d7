// Package manifests holds the offline checks of the Kubernetes manifests
// in docs/deploy/kubernetes: it has no code of its own, only tests, so the
// checks run with `go test` (and so in `make test` and CI) without a
// cluster.
//
// # Outline
//
//   - Every YAML document under docs/deploy/kubernetes is decoded the way
//     the API server decodes it (case-sensitive, no unknown or duplicate
//     fields) into the k8s.io/api types for the built-in kinds, and into
//     structs kept in agones_test.go that mirror the Agones CRD schemas
//     (agones.dev/v1 Fleet, autoscaling.agones.dev/v1 FleetAutoscaler),
//     with the CRDs' enums, ranges and Agones' own validation rules.
//   - Across documents: one namespace, one image, Service selectors and
//     target ports that reach the Deployment, probes on /healthz and
//     /readyz, a NetworkPolicy that admits area hosts to the control port,
//     the FleetAutoscaler naming the Fleet, non-root read-only containers,
//     and every Secret key an env var reads defined by the example Secrets
//     and created in docs/kubernetes.md.
//   - Against the binary: every flag the containers pass and every LEY_*
//     variable they set exists in `ley director --help` or
//     `ley areahost --help` of a freshly built ley, and the ports in those
//     flags are the ports the Service and the Fleet expose.
//
// # Caveats
//
// This is validation against the API types and a kept mirror of the CRD
// schema, not an apply to a real cluster: admission webhooks, the Agones
// controller's defaulting and a cluster's policies are not exercised.
package manifests
