package themes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// Limits of a theme.
const (
	maxDescription = 500
	maxImageURL    = 2000
	maxMessage     = 2000 // characters of one text
	maxMessages    = 2000 // texts of a theme, every language together
)

// namePattern is a theme's name: what a realm's loginTheme, accountTheme
// and emailTheme hold, so a short word of its own (Keycloak's theme names
// hold dots: keycloak.v2).
var namePattern = validate.MustPattern(`^[a-z0-9][a-z0-9._-]*$`, 1, 63)

// CheckName refuses what cannot name a theme of a realm: a malformed
// name, or a preset's, which the realm fields read as that preset.
func CheckName(field, name string) error {
	if !namePattern.MatchString(name) {
		return apperr.Field(field, "must be 1 to 63 lowercase letters, digits, dots, hyphens or underscores, starting with a letter or digit")
	}
	if IsPreset(name) {
		return apperr.Field(field, "%s is a preset's name: a theme takes another", name)
	}
	return nil
}

// CheckPickSyntax refuses a realm field (loginTheme…) that can name
// neither a preset nor a theme; "" is the realm's own look. Whether the
// theme exists is CheckPicks's.
func CheckPickSyntax(field, name string) error {
	if name == "" || IsPreset(name) {
		return nil
	}
	if !namePattern.MatchString(name) {
		return apperr.Field(field, "must be one of %s, or the name of a published theme of the realm", strings.Join(PresetNames(), ", "))
	}
	return nil
}

// check refuses a definition that could break a page or a mail, naming
// the field at fault. It fills in the default preset.
func (s *Service) check(ctx context.Context, realm *store.Realm, d *Definition) error {
	if d.Preset == "" {
		d.Preset = DefaultPreset
	}
	p, ok := presetNamed(d.Preset)
	if !ok {
		return apperr.Field("preset", "must be one of %s", strings.Join(PresetNames(), ", "))
	}
	if err := checkTokens(d.Tokens); err != nil {
		return err
	}
	if err := checkContrast(p, d.Tokens); err != nil {
		return err
	}
	if err := s.checkImage(ctx, realm, "logo", d.Logo); err != nil {
		return err
	}
	if err := s.checkImage(ctx, realm, "favicon", d.Favicon); err != nil {
		return err
	}
	if err := s.checkMessages(d.Messages); err != nil {
		return err
	}
	_, err := compileEmails(d.Emails)
	return err
}

func (s *Service) checkImage(ctx context.Context, realm *store.Realm, field string, img *Image) error {
	switch {
	case img == nil:
		return nil
	case (img.AssetID == "") == (img.URL == ""):
		return apperr.Field(field, "give exactly one of assetId (an image uploaded to the realm) and url (an https address)")
	case img.AssetID != "":
		_, err := s.deps.Store.ThemeAssetInfo(ctx, realm.ID, img.AssetID)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.Field(field+".assetId", "no image %s in the realm: upload it first (POST …/themes/assets/upload)", img.AssetID)
		}
		return err
	}
	u, err := url.Parse(img.URL)
	if len(img.URL) > maxImageURL || err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" ||
		strings.ContainsFunc(img.URL, unicode.IsSpace) {
		return apperr.Field(field+".url", "must be an https address without credentials, at most %d characters", maxImageURL)
	}
	return nil
}

// checkMessages refuses a language the server has no catalogue of, a key
// no catalogue has (it would never show), a placeholder the key's
// English text lacks (it would show as {3}), and an empty or overlong
// text.
func (s *Service) checkMessages(messages map[string]map[string]string) error {
	tags, n := s.deps.Messages.Tags(), 0
	for _, tag := range slices.Sorted(maps.Keys(messages)) {
		if !slices.Contains(tags, tag) {
			return apperr.Field("messages."+tag, "no catalogue for %q; the languages are %s", tag, strings.Join(tags, ", "))
		}
		texts := messages[tag]
		n += len(texts)
		if n > maxMessages {
			return apperr.Field("messages", "holds more than %d texts", maxMessages)
		}
		for _, key := range slices.Sorted(maps.Keys(texts)) {
			field, text := "messages."+tag+"."+key, texts[key]
			english, ok := s.deps.Messages.Message(ui.DefaultLocale, key)
			if !ok {
				return &apperr.Error{Status: 400, Code: apperr.CodeUnknownField, Field: field,
					Message: fmt.Sprintf("%s: no message %q in the catalogues (ui/messages)", field, key)}
			}
			switch {
			case strings.TrimSpace(text) == "":
				return apperr.Field(field, "must not be empty: a label or button would show nothing")
			case utf8.RuneCountInString(text) > maxMessage:
				return apperr.Field(field, "is longer than %d characters", maxMessage)
			case !utf8.ValidString(text) || strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }):
				return apperr.Field(field, "must be valid UTF-8 without control characters")
			}
			allowed := ui.Placeholders(english)
			for _, ph := range ui.Placeholders(text) {
				if !slices.Contains(allowed, ph) {
					return apperr.Field(field, "%s has no value here; the message takes %s", ph, placeholderList(allowed))
				}
			}
		}
	}
	return nil
}

func placeholderList(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return strings.Join(ps, ", ")
}

// compileEmails checks each mail override, naming the part at fault as
// emails.<kind>.<part>, and answers them compiled.
func compileEmails(emails map[string]mailtheme.Override) (map[string]*mailtheme.Template, error) {
	out := map[string]*mailtheme.Template{}
	for _, kind := range slices.Sorted(maps.Keys(emails)) {
		if _, ok := mailtheme.KindNamed(kind); !ok {
			field := "emails." + kind
			return nil, &apperr.Error{Status: 400, Code: apperr.CodeUnknownField, Field: field,
				Message: fmt.Sprintf("%s: no such mail; the mails are %s", field, strings.Join(mailtheme.Names(), ", "))}
		}
		o := emails[kind]
		if o == (mailtheme.Override{}) {
			continue
		}
		t, err := mailtheme.Compile(kind, o)
		var e *mailtheme.Error
		if errors.As(err, &e) {
			return nil, apperr.Field("emails."+kind+"."+e.Part, "%s", e.Message)
		} else if err != nil {
			return nil, err
		}
		out[kind] = t
	}
	return out, nil
}

// checkInput checks a theme's name and description besides its look.
func (s *Service) checkInput(ctx context.Context, realm *store.Realm, in *ThemeInput) error {
	if err := CheckName("name", in.Name); err != nil {
		return err
	}
	if utf8.RuneCountInString(in.Description) > maxDescription {
		return apperr.Field("description", "is longer than %d characters", maxDescription)
	}
	if strings.ContainsFunc(in.Description, unicode.IsControl) {
		return apperr.Field("description", "must not hold control characters")
	}
	return s.check(ctx, realm, &in.Definition)
}
