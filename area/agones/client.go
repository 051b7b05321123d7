package agones

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// PortEnv is the environment variable Agones sets in every game server
// container to the SDK sidecar's HTTP port.
const PortEnv = "AGONES_SDK_HTTP_PORT"

// DefaultHTTPPort is the sidecar's HTTP port when PortEnv is unset.
const DefaultHTTPPort = 9358

// LabelPrefix is what Agones puts in front of every label and annotation
// key set through the SDK.
const LabelPrefix = "agones.dev/sdk-"

var (
	// ErrUnreachable means the request never got an answer: the sidecar is
	// not listening yet (it may start after the game server), has gone, or
	// did not answer within the client's timeout.
	ErrUnreachable = errors.New("agones: SDK sidecar unreachable")
	// ErrStatus means the sidecar answered with a status other than 2xx;
	// the error is a *StatusError carrying the code.
	ErrStatus = errors.New("agones: SDK sidecar refused the call")
	// ErrBadLabel means a label or annotation key, or a label value, that
	// Kubernetes would reject once Agones prefixed it; nothing was sent.
	ErrBadLabel = errors.New("agones: invalid label")
	// ErrNoAddress means the GameServer has no address, or no port of the
	// asked name, yet.
	ErrNoAddress = errors.New("agones: GameServer has no address for that port")
	// ErrShutdown means the Lifecycle has already shut the GameServer down.
	ErrShutdown = errors.New("agones: GameServer shut down")
	// ErrBadPort means PortEnv does not hold a TCP port number.
	ErrBadPort = errors.New("agones: bad SDK port")
)

// StatusError is a non-2xx answer of the sidecar. errors.Is(err, ErrStatus)
// holds for it.
type StatusError struct {
	Method string // HTTP method of the call
	Path   string // path of the call, such as "/ready"
	Code   int    // HTTP status code
	Body   string // start of the answer's body (grpc-gateway's error JSON), trimmed
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("agones: %s %s: status %d", e.Method, e.Path, e.Code)
	}
	return fmt.Sprintf("agones: %s %s: status %d: %s", e.Method, e.Path, e.Code, e.Body)
}

// Unwrap returns ErrStatus.
func (e *StatusError) Unwrap() error { return ErrStatus }

// retryable reports whether a call that failed with err may succeed if
// simply repeated: the sidecar was unreachable or answered 5xx.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500
	}
	return errors.Is(err, ErrUnreachable)
}

// ClientConfig configures a Client. Start from DefaultClientConfig.
type ClientConfig struct {
	// BaseURL is the sidecar's REST root, such as "http://localhost:9358".
	BaseURL string
	// Timeout bounds each call (connect, request and answer). The sidecar
	// is on the Pod's loopback, so an answer takes milliseconds; a longer
	// wait means it is stuck.
	Timeout time.Duration
	// HTTPClient, when set, makes the requests instead of the client
	// NewClient builds (which uses Timeout, never a proxy, and keeps one
	// idle connection).
	HTTPClient *http.Client
}

// DefaultClientConfig returns a fresh ClientConfig for the sidecar of this
// Pod: BaseURL from BaseURLFromEnv (or the default port if PortEnv is bad;
// NewClient does not re-check it) and a 2 s Timeout.
func DefaultClientConfig() ClientConfig {
	base, err := BaseURLFromEnv()
	if err != nil {
		base = "http://localhost:" + strconv.Itoa(DefaultHTTPPort)
	}
	return ClientConfig{BaseURL: base, Timeout: 2 * time.Second}
}

// BaseURLFromEnv returns http://localhost:<port> with the port from
// PortEnv, or DefaultHTTPPort when it is unset or empty. It fails with
// ErrBadPort when PortEnv is set to anything but a port number 1..65535.
func BaseURLFromEnv() (string, error) {
	port := DefaultHTTPPort
	if v := strings.TrimSpace(os.Getenv(PortEnv)); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return "", fmt.Errorf("%w: %s=%q", ErrBadPort, PortEnv, v)
		}
		port = p
	}
	return "http://" + net.JoinHostPort("localhost", strconv.Itoa(port)), nil
}

// Client calls the Agones SDK sidecar's REST API. Every method makes one
// request and returns when the sidecar answered, the call's timeout passed
// or ctx is done; none retries. A Client is safe for concurrent use.
type Client struct {
	base *url.URL
	hc   *http.Client
}

// NewClient returns a Client for cfg. It fails if BaseURL is not an
// absolute http(s) URL or Timeout is not positive. It does not contact the
// sidecar.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("agones: base URL %q: want http://host:port", cfg.BaseURL)
	}
	if cfg.Timeout <= 0 {
		return nil, fmt.Errorf("agones: timeout %v: must be positive", cfg.Timeout)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout: cfg.Timeout,
			Transport: &http.Transport{
				Proxy:               nil, // the sidecar is on loopback: never through a proxy
				DialContext:         (&net.Dialer{Timeout: cfg.Timeout}).DialContext,
				MaxIdleConnsPerHost: 1,
				IdleConnTimeout:     time.Minute,
			},
		}
	}
	return &Client{base: u, hc: hc}, nil
}

// emptyBody is the documented body of the calls without arguments.
var emptyBody = []byte("{}")

// Ready tells Agones the game server takes player connections (POST
// /ready): the GameServer moves to Ready, or back to Ready from Allocated.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/ready", emptyBody, nil)
}

// Health sends one health ping (POST /health). Agones marks the GameServer
// Unhealthy when no ping arrives within its health period for
// failureThreshold periods in a row.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/health", emptyBody, nil)
}

// Allocate marks the GameServer Allocated (POST /allocate): in use, so a
// fleet scale-down spares it and a Buffer FleetAutoscaler counts it as
// taken.
func (c *Client) Allocate(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/allocate", emptyBody, nil)
}

// Shutdown tells Agones the game server is done (POST /shutdown): the
// GameServer moves to Shutdown and its Pod is terminated.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/shutdown", emptyBody, nil)
}

// keyValue is the documented body of the metadata calls.
type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SetLabel sets the label LabelPrefix+key to value on the GameServer (PUT
// /metadata/label). It fails with ErrBadLabel, sending nothing, when the
// prefixed key or the value is not a valid Kubernetes label.
func (c *Client) SetLabel(ctx context.Context, key, value string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if value != "" && !isLabelName(value) {
		return fmt.Errorf("%w: value %q: at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends", ErrBadLabel, value)
	}
	return c.putKeyValue(ctx, "/metadata/label", key, value)
}

// SetAnnotation sets the annotation LabelPrefix+key to value on the
// GameServer (PUT /metadata/annotation). The key follows SetLabel's rules
// (ErrBadLabel); the value may be any string.
func (c *Client) SetAnnotation(ctx context.Context, key, value string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return c.putKeyValue(ctx, "/metadata/annotation", key, value)
}

func (c *Client) putKeyValue(ctx context.Context, path, key, value string) error {
	body, err := json.Marshal(keyValue{Key: key, Value: value})
	if err != nil {
		return fmt.Errorf("agones: PUT %s: %w", path, err)
	}
	return c.do(ctx, http.MethodPut, path, body, nil)
}

// GameServer is the part of the backing GameServer the sidecar returns
// (GET /gameserver) that a host needs. Fields the sidecar adds are ignored.
type GameServer struct {
	ObjectMeta ObjectMeta       `json:"object_meta"`
	Spec       GameServerSpec   `json:"spec"`
	Status     GameServerStatus `json:"status"`
}

// ObjectMeta is the GameServer's name, namespace, labels and annotations.
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// GameServerSpec carries the GameServer's health checking settings.
type GameServerSpec struct {
	Health Health `json:"health"`
}

// Health is the GameServer's spec.health.
type Health struct {
	Disabled            bool  `json:"disabled"`
	PeriodSeconds       int32 `json:"period_seconds"`
	FailureThreshold    int32 `json:"failure_threshold"`
	InitialDelaySeconds int32 `json:"initial_delay_seconds"`
}

// GameServerStatus is the GameServer's state and public address.
type GameServerStatus struct {
	// State is Agones' state name: Scheduled, RequestReady, Ready,
	// Allocated, Reserved, Shutdown, Unhealthy, ...
	State string `json:"state"`
	// Address is the node's address players connect to.
	Address string `json:"address"`
	// Ports are the host ports Agones opened, by the names in spec.ports.
	Ports []Port `json:"ports"`
}

// Port is one port Agones opened for the GameServer.
type Port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

// maxGameServerBody bounds the GameServer answer read into memory.
const maxGameServerBody = 1 << 20

// GameServer returns the backing GameServer (GET /gameserver).
func (c *Client) GameServer(ctx context.Context) (GameServer, error) {
	var gs GameServer
	err := c.do(ctx, http.MethodGet, "/gameserver", nil, func(r io.Reader) error {
		return json.NewDecoder(io.LimitReader(r, maxGameServerBody)).Decode(&gs)
	})
	return gs, err
}

// maxErrorBody bounds the part of an error answer kept in a StatusError.
const maxErrorBody = 256

// do sends one request and hands a 2xx answer's body to decode (nil:
// discarded).
func (c *Client) do(ctx context.Context, method, path string, body []byte, decode func(io.Reader) error) error {
	u := *c.base
	u.Path += path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fmt.Errorf("agones: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("agones: %s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if decode != nil {
		if err := decode(resp.Body); err != nil {
			return fmt.Errorf("agones: %s %s: decode answer: %w", method, path, err)
		}
	}
	// Drain a little so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return nil
}

// checkKey reports whether LabelPrefix+key is a valid label key: the
// prefix "agones.dev/" and the name "sdk-"+key, at most 63 characters.
func checkKey(key string) error {
	if key == "" || !isLabelName("sdk-"+key) {
		return fmt.Errorf("%w: key %q: at most %d of [A-Za-z0-9-_.], ending alphanumeric, no '/'", ErrBadLabel, key, 63-len("sdk-"))
	}
	return nil
}

// isLabelName reports whether s is a Kubernetes label name (the part after
// a prefix's "/", and the syntax of a non-empty label value): 1..63
// characters of [A-Za-z0-9-_.], alphanumeric at both ends.
func isLabelName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	alnum := func(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if b := s[i]; !alnum(b) && b != '-' && b != '_' && b != '.' {
			return false
		}
	}
	return true
}
