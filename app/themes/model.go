package themes

import (
	"encoding/json"
	"fmt"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// Definition is a theme's look: what a draft holds and a version keeps.
type Definition struct {
	// Preset is the built-in look the theme starts from.
	Preset string `json:"preset"`
	Tokens Tokens `json:"tokens"`
	// Logo and Favicon are each an image uploaded to the realm or an
	// https address.
	Logo    *Image `json:"logo,omitempty"`
	Favicon *Image `json:"favicon,omitempty"`
	// Messages are texts of the pages' and mails' catalogues the theme
	// says its own way, by language tag and key.
	Messages map[string]map[string]string `json:"messages,omitempty"`
	// Emails replace the subject, HTML or text of mails, by kind.
	Emails map[string]mailtheme.Override `json:"emails,omitempty"`
}

// Image is a theme's logo or favicon: exactly one of an uploaded asset
// of the realm and an https address.
type Image struct {
	AssetID string `json:"assetId,omitempty"`
	URL     string `json:"url,omitempty"`
}

// ThemeInput is the body of a theme's creation and replacement.
type ThemeInput struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Definition
}

// Theme is a theme as the API shows it: its draft, the number of its
// newest published version (0 for none), and the fields of its realm
// that pick it.
type Theme struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Definition
	PublishedVersion int64    `json:"publishedVersion"`
	UsedBy           []string `json:"usedBy"`
	CreatedTimestamp int64    `json:"createdTimestamp"`
	UpdatedTimestamp int64    `json:"updatedTimestamp"`
}

// Version is a published version of a theme, as it was published.
type Version struct {
	ThemeID            string `json:"themeId"`
	Version            int64  `json:"version"`
	PublishedTimestamp int64  `json:"publishedTimestamp"`
	Definition
}

// encode is d as the store keeps it. Maps encode with sorted keys, so
// two equal definitions encode alike (publish compares them).
func (d Definition) encode() (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("encode theme: %w", err)
	}
	return string(b), nil
}

func decodeDefinition(s string) (Definition, error) {
	var d Definition
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return d, fmt.Errorf("decode theme: %w", err)
	}
	return d, nil
}

func toVersion(v *store.ThemeVersion) (Version, error) {
	d, err := decodeDefinition(v.Content)
	if err != nil {
		return Version{}, err
	}
	return Version{ThemeID: v.ThemeID, Version: v.Version, PublishedTimestamp: v.PublishedAt, Definition: d}, nil
}
