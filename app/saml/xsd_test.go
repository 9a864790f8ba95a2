package saml

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The OASIS schemas of SAML 2.0, with the W3C ones they import, kept in
// testdata/saml/xsd (README.md there says where they come from).
const (
	schemaMetadata = "saml-schema-metadata-2.0.xsd"
	schemaProtocol = "saml-schema-protocol-2.0.xsd"
)

// validateXSD checks doc against the schema file of testdata/saml/xsd
// with libxml2's xmllint (Debian's libxml2-utils), offline: every schema
// is read from the directory, none from the network.
func validateXSD(t testing.TB, schema string, doc []byte) {
	t.Helper()
	if err := checkXSD(t, schema, doc); err != nil {
		t.Fatalf("%v\ndocument:\n%s", err, doc)
	}
}

// checkXSD is validateXSD's check, answering what xmllint says of an
// invalid document.
func checkXSD(t testing.TB, schema string, doc []byte) error {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		const msg = "xmllint is not installed (apt-get install libxml2-utils): the schema checks need it"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	xsd, err := filepath.Abs(filepath.Join("..", "..", "testdata", "saml", "xsd", schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(xsd); err != nil {
		t.Fatalf("schema: %v", err)
	}
	file := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("not valid against %s: %w\n%s", schema, err, out)
	}
	return nil
}

// The schema check fails what the schema forbids: a descriptor whose
// elements are out of the schema's order, or one without its required
// SingleSignOnService.
func TestSchemaCheckRefuses(t *testing.T) {
	const head = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.test">` +
		`<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">`
	const tail = `</md:IDPSSODescriptor></md:EntityDescriptor>`
	const sso = `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.test/sso"/>`
	const format = `<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:transient</md:NameIDFormat>`
	validateXSD(t, schemaMetadata, []byte(head+format+sso+tail))
	for name, doc := range map[string]string{
		"out of order":           head + sso + format + tail,
		"no SingleSignOnService": head + format + tail,
		"unknown element":        head + `<md:Nope/>` + sso + tail,
	} {
		if err := checkXSD(t, schemaMetadata, []byte(doc)); err == nil {
			t.Errorf("%s: the schema check passed %s", name, doc)
		}
	}
}
