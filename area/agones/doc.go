// Package agones lets an area host run as an Agones GameServer: it speaks to
// the Agones SDK sidecar over the sidecar's documented REST API (the
// grpc-gateway on http://localhost:$AGONES_SDK_HTTP_PORT, default 9358) with
// net/http, so ley needs no Agones or gRPC module.
//
// The package knows nothing of Areas or of the director: the host tells it
// what it is doing (registered, how many Areas and players, drained) and the
// package turns that into the SDK calls Agones expects.
//
// # Outline
//
//   - [Client] is one call per documented endpoint: [Client.Ready]
//     (POST /ready), [Client.Health] (POST /health), [Client.Allocate]
//     (POST /allocate), [Client.Shutdown] (POST /shutdown),
//     [Client.SetLabel] (PUT /metadata/label), [Client.SetAnnotation]
//     (PUT /metadata/annotation) and [Client.GameServer] (GET /gameserver).
//     Each makes exactly one request, bounded by [ClientConfig.Timeout] and
//     its context; [NewClient] and [BaseURLFromEnv] build it.
//   - [Lifecycle] is what the host drives: [Lifecycle.Run] pings Health
//     every [Config.HealthEvery] (default 2 s, well inside Agones' default
//     5 s health period) and applies the latest status; [Lifecycle.Ready]
//     after the host registered with its director; [Lifecycle.SetStatus]
//     whenever its Areas or players change (it never blocks: labels are set
//     only when a figure changed, Allocate is called when the first Area
//     arrives so the FleetAutoscaler counts the host as in use, and Ready
//     again once it has been empty for [Config.ReleaseAfter] so the fleet
//     may scale it down); [Lifecycle.Shutdown] once it drained.
//     [Lifecycle.Address] waits for the node address and port Agones gave
//     the client port, for the ws:// URL the director hands to players.
//   - Errors: [ErrUnreachable] (the sidecar is not up, or gone),
//     [ErrStatus] (it answered non-2xx; the error is a [*StatusError]),
//     [ErrBadLabel], [ErrNoAddress], [ErrShutdown], [ErrBadPort].
//
// # Labels
//
// Agones prefixes every key set through the SDK with "agones.dev/sdk-", so a
// key must itself be a valid label name once prefixed: at most 59
// characters of [A-Za-z0-9-_.], starting and ending alphanumeric, and no
// "/" (a prefixed key can hold only one). The defaults "ley-areas" and
// "ley-players" become the GameServer labels agones.dev/sdk-ley-areas and
// agones.dev/sdk-ley-players, which kubectl can select on.
//
// # Caveats
//
// The sidecar may start after the host: [Lifecycle.Ready],
// [Lifecycle.Shutdown] and [Lifecycle.Address] retry while it is
// unreachable or answers 5xx, with a doubling delay from
// [Config.RetryEvery]; [Client] calls never retry. A state change the SDK
// accepted is not yet a state change of the GameServer (Agones applies it
// asynchronously, and may move the GameServer elsewhere itself, as on a
// fleet scale-down); kubectl shows the outcome.
package agones
