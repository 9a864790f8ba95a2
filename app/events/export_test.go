package events

// Names the external tests of this package reach.
var (
	DefuseFormula = defuseFormula
)
