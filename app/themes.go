package app

import (
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/httpx"
)

const defaultTheme = "idenplane"

// themePresets are the built-in looks of the hosted pages; a realm picks one
// by name and may override its colors.
var themePresets = []string{"idenplane", "idenplane-dark", "high-contrast"}

func themeNames() []string { return slices.Clone(themePresets) }

func isTheme(name string) bool { return slices.Contains(themePresets, name) }

func listThemes(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, themePresets)
	return nil
}
