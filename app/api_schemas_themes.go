package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/themes"
)

// describeThemes describes the realms' themes, their versions, previews
// and images (docs/themes.md).
func describeThemes(describe func(method, path string, o openapi.Op)) {
	const list, one = "/admin/realms/{realm}/themes", "/admin/realms/{realm}/themes/{themeId}"
	describe(http.MethodGet, "/admin/realms/themes", openapi.Op{Summary: "List the built-in theme presets of the hosted pages",
		Description: "Their names: what a realm's `themeName` takes, and what a theme starts from.", Response: []string{}})
	example := map[string]any{"id": "8c2d…", "name": "acme-brand", "description": "", "preset": "idenplane",
		"tokens": map[string]any{"colors": map[string]any{"primary": "#0b5fff", "primaryText": "#ffffff"},
			"fonts": map[string]any{"body": `Inter, "Segoe UI", sans-serif`}, "radius": map[string]any{"control": "6px"}},
		"logo":             map[string]any{"assetId": "5b0e…"},
		"messages":         map[string]any{"en": map[string]any{"login.title": "Welcome back"}},
		"emails":           map[string]any{"verify-email": map[string]any{"subject": "Confirm your address for {{.Realm}}"}},
		"publishedVersion": 2, "usedBy": []string{"loginTheme"},
		"createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000)}
	checks := "Everything is checked at save: `preset` is a built-in one; `tokens` are known design tokens (colours " +
		"`#rgb`, `#rrggbb`, `rgb()` or `hsl()`, opaque, with the contrast WCAG AA asks of the pairs read on each other; fonts " +
		"a plain font-family list; radius and spacing a length in px, rem or em); `logo` and `favicon` an uploaded image " +
		"(`assetId`) or an https `url`; `messages` keys of the catalogues in their languages, with no placeholder the " +
		"message lacks; `emails` templates (text/template, html/template) using only their mail's variables (GET …/built-in)."
	describe(http.MethodPost, list, openapi.Op{Summary: "Create a theme", Description: checks + " The theme is a draft until published.",
		Request: themes.ThemeInput{}, Status: http.StatusCreated, Response: themes.Theme{}, Example: example})
	describe(http.MethodGet, list, openapi.Op{Summary: "List the realm's themes", Description: "By name, each with its draft.",
		Response: []themes.Theme{}})
	describe(http.MethodGet, list+"/built-in", openapi.Op{Summary: "The presets and what a theme may change",
		Description: "The three presets with their default tokens; every design token with the custom property it sets; the " +
			"pages a preview renders; the mails with the variables of their templates; the languages of the catalogues.",
		Response: themes.BuiltIn{}})
	describe(http.MethodPost, list+"/preview", openapi.Op{Summary: "Render a page or a mail with a draft",
		Description: "`page` (sign-in, registration, totp, consent, account, error) or `email` (a mail's name), with " +
			"`themeId` (that theme's draft) or `theme` (a draft sent along, checked as a save checks it), in `locale` " +
			"(the realm's default language when left out). A page comes with the Content-Security-Policy it is served " +
			"under; a mail with its subject and text. Nothing is stored or sent.",
		Request: themes.PreviewInput{}, Response: themes.Preview{}})
	describe(http.MethodPost, list+"/assets/upload", openapi.Op{Summary: "Upload an image for a theme",
		Description: "multipart/form-data with the image in the field `file`: PNG, JPEG, WebP or ICO, told from its bytes " +
			"(never its name), at most 512 KiB and 1024×1024 pixels. SVG is refused. The answer's `url` is public; a " +
			"theme's `logo` or `favicon` takes the `id` as `assetId`.",
		Request: openapi.Schema{"type": "object", "required": []string{themes.UploadField},
			"properties": map[string]any{themes.UploadField: map[string]any{"type": "string", "format": "binary"}}},
		RequestTypes: []string{"multipart/form-data"}, Status: http.StatusCreated, Response: themes.Asset{}})
	describe(http.MethodGet, one, openapi.Op{Summary: "Get a theme", Description: "Its draft, the number of its newest " +
		"published version (0 for none) and the realm's fields that pick it.", Response: themes.Theme{}})
	describe(http.MethodPut, one, openapi.Op{Summary: "Replace a theme's draft",
		Description: checks + " Published versions stay as they are. A theme a realm field picks keeps its name (409).",
		Request:     themes.ThemeInput{}, Response: themes.Theme{}})
	describe(http.MethodDelete, one, openapi.Op{Summary: "Delete a theme and its versions",
		Description: "Refused (409, naming the field) while the realm's `loginTheme`, `accountTheme` or `emailTheme` picks it.",
		Status:      http.StatusNoContent})
	describe(http.MethodPost, one+"/publish", openapi.Op{Summary: "Publish a theme's draft",
		Description: "The draft becomes the next version (1, 2, 3…), never changed afterwards, which the realms picking the " +
			"theme wear at once: 201. A draft that is the newest version already publishes nothing: 200 with that version.",
		Status: http.StatusCreated, Response: themes.Version{}, Also: map[int]any{http.StatusOK: themes.Version{}}})
	describe(http.MethodGet, one+"/versions", openapi.Op{Summary: "List a theme's published versions",
		Description: "Newest first, each as it was published.", Query: []openapi.Param{openapi.ParamFirst, openapi.ParamMax},
		Response: []themes.Version{}})
	describe(http.MethodPost, one+"/restore/{version}", openapi.Op{Summary: "Make a published version the draft again",
		Description: "Its look only: the name and description stay. The realms go on wearing the newest version until the " +
			"draft is published.", Response: themes.Theme{}})
}
