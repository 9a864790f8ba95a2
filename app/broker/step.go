package broker

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// step is the idp-redirect step of an authentication flow: the sign-in
// goes to an identity provider, whose callback passes the step
// (signin.Engine.Pass) with the user it vouched for. It has no form.
type step struct {
	s *Service
	// icon is the address of the icon of a provider type.
	icon func(providerType string) string
}

// Step is brokering's step of the hosted sign-in (app/signin).
func (s *Service) Step(icon func(providerType string) string) signin.Step {
	return step{s: s, icon: icon}
}

func (step) Kind() signin.StepKind { return signin.KindIdentityProvider }

// AMR: a brokered sign-in, as the sign-in without a flow says it.
func (step) AMR() []string              { return []string{AMRFederated} }
func (step) Events() []signin.EventType { return nil }

// Show sends the browser to the provider the step names, or shows a
// button for each provider of the realm.
func (st step) Show(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) error {
	buttons, err := st.s.buttons(r.Context(), f.Realm, func(alias string) string { return st.s.FlowLoginURL(f.Realm, alias, f) })
	if err != nil {
		return err
	}
	if v.Provider != "" {
		p, err := st.s.enabledProvider(r.Context(), f.Realm, v.Provider)
		if err != nil {
			return err
		}
		if p.ClientSecret == "" {
			return errNotConfigured
		}
		http.Redirect(w, r, st.s.FlowLoginURL(f.Realm, p.Alias, f), http.StatusSeeOther)
		return nil
	}
	for i := range buttons {
		buttons[i].Icon = st.icon(buttons[i].Type)
	}
	return st.s.deps.Pages.Render(w, r, http.StatusOK, ui.ProviderChoice(st.s.deps.Pages.Page("login.title"),
		ui.ProviderChoiceForm{Providers: buttons, Others: v.Ways}))
}

// Submit: the step has no form; its callback passes it.
func (step) Submit(http.ResponseWriter, *http.Request, *signin.Flow, signin.View) (*store.User, error) {
	return nil, errNoForm
}

var errNoForm = apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest, "this step of the sign-in takes no form")

// Offer: on the page of another way to sign in, a button for each
// provider the step may go to, straight to it.
func (st step) Offer(ctx context.Context, f *signin.Flow, c signin.Choice) ([]ui.OtherWay, error) {
	var aliases []string // the buttons' providers, in their order: buttons asks for the URL of each it keeps
	buttons, err := st.s.buttons(ctx, f.Realm, func(alias string) string {
		aliases = append(aliases, alias)
		return st.s.FlowLoginURL(f.Realm, alias, f)
	})
	if err != nil {
		return nil, err
	}
	var ways []ui.OtherWay
	for i, b := range buttons {
		if c.Provider == "" || aliases[i] == c.Provider {
			b.Icon = st.icon(b.Type)
			ways = append(ways, ui.OtherWay{Provider: &b})
		}
	}
	return ways, nil
}
