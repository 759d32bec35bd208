package longfairv1

import (
	"encoding/json"
	"testing"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"
)

// TestOpenAPIDocumentIsValid checks the OpenAPI document the servers serve
// with go-openapi/validate, a validator of the OpenAPI 2.0 specification
// no one here wrote: its schema, that every $ref resolves, that path
// parameters are declared and operation ids unique.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := loads.Analyzed(json.RawMessage(OpenAPIDocument()), "")
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	if v := doc.Version(); v != "2.0" {
		t.Errorf("OpenAPI version %q, want 2.0", v)
	}
	if err := validate.Spec(doc, strfmt.Default); err != nil {
		t.Fatalf("the OpenAPI document is not valid OpenAPI 2.0: %v", err)
	}
}
