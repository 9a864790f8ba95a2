package saml

// Names the external tests of this package reach.
var (
	ValidateXSD    = validateXSD
	SchemaMetadata = schemaMetadata
	SchemaProtocol = schemaProtocol
)
