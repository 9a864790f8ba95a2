package events

// Names the external tests of this package reach.
var (
	LoginEventTypes = loginEventTypes
	DefuseFormula   = defuseFormula
)
