package account

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Deleting one's own account: asked for with the current password, it
// happens when a grace window ends, and until then the user can still
// sign in and cancel it. A job (RunJobs) carries out the deletions due.

const (
	// DeletionGrace is how long a user has to change their mind.
	DeletionGrace = 7 * 24 * time.Hour
	// accountDeletionBatch bounds the deletions one read of the job takes.
	accountDeletionBatch = 100
)

var (
	errDeletionScheduled = apperr.New(http.StatusConflict, apperr.CodeConflict, "the account's deletion is already scheduled")
	errNoDeletion        = apperr.New(http.StatusNotFound, apperr.CodeNotFound, "no deletion of the account is scheduled")
)

// DeletionStatus is GET /account/delete-account: the deletion's
// status in JSON, or the page that asks for it or cancels it.
func (s *Service) DeletionStatus(w http.ResponseWriter, r *http.Request, c *Caller) error {
	d, err := s.deletion(r.Context(), c)
	if err != nil {
		return err
	}
	if c.API {
		httpx.WriteJSON(w, http.StatusOK, toAccountDeletionRep(d))
		return nil
	}
	return s.renderAccountDelete(w, r, c, http.StatusOK, d, ui.AccountDeleteView{Notice: accountNotice(r)})
}

func (s *Service) renderAccountDelete(w http.ResponseWriter, r *http.Request, c *Caller, status int, d *store.AccountDeletion, v ui.AccountDeleteView) error {
	base := Path(c.Realm)
	if d != nil {
		v.Scheduled, v.RequestedAt, v.DeleteAt = true, accountDate(d.RequestedAt), accountDate(d.DeleteAt)
		v.CancelCSRFToken = s.deps.Pages.CSRFToken(w, r, c.Realm, accountFormCancelDelete, c.Session.ID)
	}
	v.CSRFToken = s.deps.Pages.CSRFToken(w, r, c.Realm, accountFormDelete, c.Session.ID)
	v.GraceDays = int(DeletionGrace / (24 * time.Hour))
	v.Action, v.CancelAction = base+"/delete-account", base+"/cancel-delete-account"
	v.ExportURL, v.BackURL = base+"/data-export", base+"/"
	return s.deps.Pages.Render(w, r, status, ui.AccountDelete(s.deps.Pages.Page("account.delete.title"), v))
}

// AccountDeleteBody is what POST /account/delete-account takes: a Bearer
// token alone cannot delete an account, its owner's password must confirm.
type AccountDeleteBody struct {
	CurrentPassword *string `json:"currentPassword"`
}

// DeleteRequest schedules the deletion of the caller's account at
// the end of the grace window: 202 with the status for the API, back to
// the delete-account page for a browser. The user's sessions stay, so
// that they can come back and cancel from wherever they are signed in.
func (s *Service) DeleteRequest(w http.ResponseWriter, r *http.Request, c *Caller) error {
	ctx := r.Context()
	var body AccountDeleteBody
	if c.API {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	} else {
		if err := s.Form(r, c, accountFormDelete); err != nil {
			return err
		}
		body.CurrentPassword = formValue(r, "currentPassword")
	}
	d, err := s.deletion(ctx, c)
	if err != nil {
		return err
	} else if d != nil { // a browser's second click: the page shows the one scheduled
		return signin.WithPage(errDeletionScheduled, accountGoTo(c.Realm, "/delete-account"))
	}
	password := ""
	set(&password, body.CurrentPassword)
	if err := s.checkCurrentPassword(ctx, r, c, password); err != nil {
		return signin.WithPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			text := s.fieldText(r, c.Realm, e)
			v := ui.AccountDeleteView{PasswordError: text}
			if e.Field == "" {
				v = ui.AccountDeleteView{Error: text}
			}
			return s.renderAccountDelete(w, r, c, e.Status, nil, v)
		})
	}
	now := s.deps.Now()
	d = &store.AccountDeletion{UserID: c.User.ID, RealmID: c.Realm.ID, RequestedAt: now.UnixMilli(),
		DeleteAt: now.Add(DeletionGrace).UnixMilli()}
	if err := s.deps.Store.ScheduleAccountDeletion(ctx, d); errors.Is(err, store.ErrConflict) {
		return errDeletionScheduled
	} else if err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventDeleteAccountScheduled, UserID: c.User.ID, ClientID: c.ClientID,
		SessionID: c.SessionID(), IPAddress: s.deps.ClientIP(r), Details: map[string]string{"deleteAt": strconv.FormatInt(d.DeleteAt, 10)}})
	if c.API {
		httpx.WriteJSON(w, http.StatusAccepted, toAccountDeletionRep(d))
		return nil
	}
	return accountRedirect(w, r, c.Realm, "/delete-account", "scheduled")
}

// CancelDelete cancels the scheduled deletion of the caller's
// account: 200 with the status for the API (404 when none is scheduled),
// back to the delete-account page for a browser.
func (s *Service) CancelDelete(w http.ResponseWriter, r *http.Request, c *Caller) error {
	ctx := r.Context()
	if !c.API {
		if err := s.Form(r, c, accountFormCancelDelete); err != nil {
			return err
		}
	}
	err := s.deps.Store.CancelAccountDeletion(ctx, c.Realm.ID, c.User.ID)
	if errors.Is(err, store.ErrNotFound) { // for a browser: cancelled already, in another tab
		return signin.WithPage(errNoDeletion, accountGoTo(c.Realm, "/delete-account"))
	} else if err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventDeleteAccountCancelled, UserID: c.User.ID, ClientID: c.ClientID,
		SessionID: c.SessionID(), IPAddress: s.deps.ClientIP(r)})
	if c.API {
		httpx.WriteJSON(w, http.StatusOK, toAccountDeletionRep(nil))
		return nil
	}
	return accountRedirect(w, r, c.Realm, "/delete-account", "cancelled")
}

// DeleteDueAccounts deletes the accounts whose grace window has ended, by
// the admin API's path, and records DELETE_ACCOUNT for each.
func (s *Service) DeleteDueAccounts(ctx context.Context) {
	now := s.deps.Now().UnixMilli()
	deleted := 0
	for {
		due, err := s.deps.Store.DueAccountDeletions(ctx, now, accountDeletionBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.deps.Log.Error("reading due account deletions failed", "err", err)
			}
			return
		}
		failed := false
		for _, d := range due {
			if err := s.deleteDueAccount(ctx, d, now); err != nil {
				failed = true
				if ctx.Err() == nil {
					s.deps.Log.Error("deleting an account failed", "realm", d.RealmName, "user", d.UserID, "err", err)
				}
				continue
			}
			deleted++
		}
		// A failure would come back in the next read: leave it to the next run.
		if failed || len(due) < accountDeletionBatch {
			break
		}
	}
	if deleted > 0 {
		s.deps.Log.Info("deleted accounts at their owners' request", "count", deleted)
	}
}

// deleteDueAccount deletes the account of d, provided its deletion is
// still scheduled and due: the user may have cancelled since it was read.
func (s *Service) deleteDueAccount(ctx context.Context, d *store.AccountDeletion, now int64) error {
	realm, err := s.deps.Store.GetRealm(ctx, d.RealmName)
	if err != nil {
		return err
	}
	var user *store.User
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		current, err := tx.GetAccountDeletion(ctx, d.RealmID, d.UserID)
		if err != nil {
			return err
		}
		if current.DeleteAt > now {
			return store.ErrNotFound
		}
		if user, err = tx.GetUser(ctx, d.RealmID, d.UserID); err != nil {
			return err
		}
		return s.deps.Identity.DeleteUser(ctx, tx, realm, user)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // cancelled, rescheduled or deleted meanwhile
	} else if err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventDeleteAccount, UserID: user.ID,
		Details: map[string]string{"username": user.Username, "requestedAt": strconv.FormatInt(d.RequestedAt, 10)}})
	return nil
}
