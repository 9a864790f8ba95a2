package mail

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// ThemeSource finds the published theme a realm's emailTheme picks. It
// answers nil when the realm picked none, and when the theme cannot be
// read (the source logs why): the mail then goes out as the server
// writes it, for a theme never stops a mail.
type ThemeSource interface {
	EmailTheme(ctx context.Context, realm *store.Realm) *mailtheme.Theme
}

// ThemeFunc is a function as a ThemeSource.
type ThemeFunc func(ctx context.Context, realm *store.Realm) *mailtheme.Theme

func (f ThemeFunc) EmailTheme(ctx context.Context, realm *store.Realm) *mailtheme.Theme {
	return f(ctx, realm)
}

// themed is m as the realm's email theme has it. A template that fails
// to run (it was run on samples when it was saved, so this is a fault of
// the server) sends the mail as the server writes it rather than none.
func (s *Service) themed(ctx context.Context, realm *store.Realm, m Message) Message {
	if s.deps.Themes == nil || m.content == nil {
		return m
	}
	out, err := Apply(s.deps.Themes.EmailTheme(ctx, realm), m)
	if err != nil {
		s.log().Error("email theme not applied", "realm", realm.Name, "template", m.Template, "err", err)
		return m
	}
	return out
}

func (s *Service) log() *slog.Logger {
	if s.deps.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.deps.Log
}

// Apply renders m again as the email theme t has it (nil: m as it is):
// the frame in the theme's colours and with its logo, then the parts the
// theme's template for m's kind replaces. The texts of the catalogues
// came with m's localizer, the theme's message overrides included
// (Languages). A mail not made by Content.Render is left as it is.
func Apply(t *mailtheme.Theme, m Message) (Message, error) {
	if t == nil || m.content == nil {
		return m, nil
	}
	c := *m.content
	if t.Primary != "" {
		c.Primary = t.Primary
	}
	if t.PrimaryText != "" {
		c.PrimaryText = t.PrimaryText
	}
	if t.LogoURL != "" {
		c.Logo = t.LogoURL
	}
	out, err := c.Render(m.Template, m.To)
	if err != nil {
		return m, err
	}
	out.From = m.From
	tmpl := t.Templates[m.Template]
	if tmpl == nil {
		return out, nil
	}
	vars := maps.Clone(c.Vars)
	if vars == nil {
		vars = map[string]string{}
	}
	for k, v := range map[string]string{"Realm": c.Realm, "Lang": c.Lang, "Dir": c.Dir, "Primary": c.Primary,
		"PrimaryText": c.PrimaryText, "LogoURL": c.Logo} {
		vars[k] = v
	}
	if err := tmpl.Execute(vars, &out.Subject, &out.HTML, &out.Text); err != nil {
		return m, fmt.Errorf("the email theme's %s mail: %w", m.Template, err)
	}
	return out, nil
}
