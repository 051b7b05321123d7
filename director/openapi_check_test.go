package director

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/leyworks/ley/director/auth"
)

// spec is openapi.yaml loaded and validated once for the tests, with a
// router over its operations.
var spec = sync.OnceValues(func() (*apiSpec, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate openapi.yaml: %w", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route openapi.yaml: %w", err)
	}
	return &apiSpec{doc: doc, router: router}, nil
})

// apiSpec is the loaded document and its router; read-only once built.
type apiSpec struct {
	doc    *openapi3.T
	router routers.Router
}

// loadSpec returns the loaded document or fails t.
func loadSpec(t testing.TB) *apiSpec {
	t.Helper()
	s, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// specCheck is an http.RoundTripper that holds what passes through it to
// openapi.yaml: with requests set, every request to an operation of the
// document must be one it describes (parameters, body, a bearer token
// where the operation wants a session); every answer must be one the document gives
// that operation (status, headers such as Retry-After, content type, and
// a body that its schema accepts, or none where it documents none); a
// request to no documented operation must be answered 404 NOT_FOUND or
// 405 METHOD_NOT_ALLOWED in the error shape. Each mismatch goes to report.
type specCheck struct {
	spec     *apiSpec
	next     http.RoundTripper
	report   func(format string, args ...any)
	requests bool
}

// checked returns a copy of hc whose requests and answers are held to
// openapi.yaml, mismatches failing the realm's test. strict also holds
// the requests to it: false is for tests that send bad ones on purpose.
func (r *realm) checked(hc *http.Client, strict bool) *http.Client {
	c := *hc
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &specCheck{spec: loadSpec(r.t), next: next, report: r.t.Errorf, requests: strict}
	return &c
}

// bearerAuth accepts a request that carries a well-formed bearer token
// (whether the realm knows it is the server's to say).
func bearerAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if _, ok := auth.ParseBearer(in.RequestValidationInput.Request.Header.Get("Authorization")); !ok {
		return errors.New("no bearer token")
	}
	return nil
}

// checkRequest reports whether the document accepts req with body.
func (s *apiSpec) checkRequest(req *http.Request, body []byte) (*openapi3filter.RequestValidationInput, error) {
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		return nil, err
	}
	vreq := req.Clone(req.Context())
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: bearerAuth, SkipSettingDefaults: true, IncludeResponseStatus: true}}
	return in, openapi3filter.ValidateRequest(req.Context(), in)
}

// RoundTrip implements http.RoundTripper.
func (c *specCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	what := req.Method + " " + req.URL.Path
	in, reqErr := c.spec.checkRequest(req, body)
	if c.requests && in != nil && reqErr != nil { // no route at all: checkNoRoute holds the answer
		c.report("openapi.yaml: request %s %s breaks the document: %v", what, body, reqErr)
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(got))
	if err != nil {
		return resp, err
	}
	if in == nil { // no documented operation
		c.checkNoRoute(what, resp, got)
		return resp, nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: in.Options}
	out.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		c.report("openapi.yaml: answer %d %s to %s breaks the document: %v", resp.StatusCode, got, what, err)
	} else if r := in.Route.Operation.Responses.Status(resp.StatusCode); r != nil && len(r.Value.Content) == 0 && len(got) > 0 {
		c.report("openapi.yaml: answer %d to %s has a body %q; the document gives it none", resp.StatusCode, what, got)
	}
	return resp, nil
}

// checkNoRoute checks the answer to a request for no documented
// operation: 404 or 405 (with Allow) in the error shape.
func (c *specCheck) checkNoRoute(what string, resp *http.Response, body []byte) {
	want := map[int]string{http.StatusNotFound: "NOT_FOUND", http.StatusMethodNotAllowed: "METHOD_NOT_ALLOWED"}[resp.StatusCode]
	var v any
	err := json.Unmarshal(body, &v)
	if err == nil {
		err = c.spec.doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
	}
	var e struct{ Code string }
	_ = json.Unmarshal(body, &e)
	switch {
	case want == "":
		c.report("openapi.yaml has no %s; it was answered %d %s, not 404 or 405", what, resp.StatusCode, body)
	case err != nil || e.Code != want:
		c.report("%s (in no route): answer %d %s; want code %s in the error shape (%v)", what, resp.StatusCode, body, want, err)
	case resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "":
		c.report("%s (in no route): 405 without Allow", what)
	}
}
