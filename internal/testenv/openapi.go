package testenv

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// OpenAPI holds the balance API's responses to its contract, api/openapi.yaml: status,
// headers and body schema, checked with kin-openapi. Responses to paths or methods
// without an operation are held to its NotFound and MethodNotAllowed responses.
type OpenAPI struct {
	doc    *openapi3.T
	router routers.Router
}

// LoadOpenAPI reads api/openapi.yaml from the module's root, above the test's
// directory, and fails t unless it is valid OpenAPI.
func LoadOpenAPI(t testing.TB) *OpenAPI {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(ModuleFile(t, "api", "openapi.yaml"))
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("api/openapi.yaml is not valid OpenAPI: %v", err)
	}
	// Tests serve on ports of their own, not the documented servers: match any host.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &OpenAPI{doc: doc, router: router}
}

// Client returns an HTTP client that checks every response against the contract,
// failing t on any mismatch.
func (s *OpenAPI) Client(t testing.TB) *http.Client {
	return &http.Client{Transport: &checking{t: t, spec: s, next: http.DefaultTransport}}
}

type checking struct {
	t    testing.TB
	spec *OpenAPI
	next http.RoundTripper
}

func (c *checking) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.spec.Check(c.t, req, resp.StatusCode, resp.Header, body)
	return resp, nil
}

// Check fails t unless a response to req keeps the contract. It serves responses
// obtained other than through Client, such as from the Lambda adapter.
func (s *OpenAPI) Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		route, params = s.generic(req)
	} else {
		s.checkRequest(t, req, route, params, status)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: the response breaks api/openapi.yaml: %v\nstatus %d, headers %v, body %s", req.Method, req.URL, err, status, header, body)
	}
	if ct := header.Get("Content-Type"); ct != "application/json" && req.Method != http.MethodHead {
		t.Errorf("%s %s: Content-Type %q, want application/json", req.Method, req.URL, ct)
	}
}

// checkRequest fails t when the API answered other than 400 a request the contract
// refuses: a parameter the contract holds to a pattern or a range, which the handler
// must check as the contract says.
func (s *OpenAPI) checkRequest(t testing.TB, req *http.Request, route *routers.Route, params map[string]string, status int) {
	t.Helper()
	decoded := make(map[string]string, len(params)) // the router leaves them escaped; maxLength counts characters
	for k, v := range params {
		if d, err := url.PathUnescape(v); err == nil {
			v = d
		}
		decoded[k] = v
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: decoded, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && status != http.StatusBadRequest {
		t.Errorf("%s %s: answered %d to a request api/openapi.yaml refuses, want 400: %v", req.Method, req.URL, status, err)
	}
}

// generic is the route for a request no operation matches: a method the path has no
// operation for may only get the MethodNotAllowed response, any other path only NotFound.
func (s *OpenAPI) generic(req *http.Request) (*routers.Route, map[string]string) {
	get := req.Clone(req.Context())
	get.Method = http.MethodGet
	responses := openapi3.NewResponses()
	responses.Delete("default")
	route := &routers.Route{Spec: s.doc, Method: req.Method, Operation: &openapi3.Operation{Responses: responses}}
	if _, params, err := s.router.FindRoute(get); err == nil {
		responses.Set("405", s.doc.Components.Responses["MethodNotAllowed"])
		return route, params
	}
	responses.Set("404", s.doc.Components.Responses["NotFound"])
	return route, nil
}

// MaxLength is the maxLength api/openapi.yaml gives its component schema name, so a
// test can hold the API to the contract's bound; t fails when there is none.
func (s *OpenAPI) MaxLength(t testing.TB, name string) int {
	t.Helper()
	ref := s.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil || ref.Value.MaxLength == nil {
		t.Fatalf("api/openapi.yaml: schema %s has no maxLength", name)
	}
	return int(*ref.Value.MaxLength)
}
