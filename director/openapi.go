package director

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"sigs.k8s.io/yaml"
)

// openAPIYAML is the OpenAPI 3.1 document of the HTTP API, served at
// GET /v1/openapi.yaml. The tests hold it to the route table and validate
// the API tests' requests and answers against it.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIJSON is the document in JSON, converted once on first use.
var openAPIJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON(openAPIYAML) })

// OpenAPI returns the OpenAPI 3.1 document of the director's HTTP API
// (YAML). The slice is shared: do not modify it.
func OpenAPI() []byte { return openAPIYAML }

// serveOpenAPIYAML: GET /v1/openapi.yaml, public.
func serveOpenAPIYAML(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openAPIYAML)
}

// openAPIJSONDoc: GET /v1/openapi.json, public: the same document in
// JSON.
func (d *Director) openAPIJSONDoc(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	b, err := openAPIJSON()
	if err != nil { // the tests convert the document: a broken one never ships
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, json.RawMessage(b), nil
}
