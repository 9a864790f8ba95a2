package app

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Deleting one's own account: asked for with the current password, it
// happens when a grace window ends, and until then the user can still
// sign in and cancel it. A job (RunJobs) carries out the deletions due.

const (
	// accountDeletionGrace is how long a user has to change their mind.
	accountDeletionGrace = 7 * 24 * time.Hour
	// accountDeletionBatch bounds the deletions one read of the job takes.
	accountDeletionBatch = 100
)

var (
	errDeletionScheduled = apperr.New(http.StatusConflict, apperr.CodeConflict, "the account's deletion is already scheduled")
	errNoDeletion        = apperr.New(http.StatusNotFound, apperr.CodeNotFound, "no deletion of the account is scheduled")
)

// accountDeletionStatus is GET /account/delete-account: the deletion's
// status in JSON, or the page that asks for it or cancels it.
func (a *App) accountDeletionStatus(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	d, err := a.accountDeletion(r.Context(), c)
	if err != nil {
		return err
	}
	if c.api {
		httpx.WriteJSON(w, http.StatusOK, toAccountDeletionRep(d))
		return nil
	}
	return a.renderAccountDelete(w, r, c, http.StatusOK, d, ui.AccountDeleteView{Notice: accountNotice(r)})
}

func (a *App) renderAccountDelete(w http.ResponseWriter, r *http.Request, c *accountCaller, status int, d *store.AccountDeletion, v ui.AccountDeleteView) error {
	base := accountPath(c.realm)
	if d != nil {
		v.Scheduled, v.RequestedAt, v.DeleteAt = true, accountDate(d.RequestedAt), accountDate(d.DeleteAt)
		v.CancelCSRFToken = a.pages.CSRFToken(w, r, c.realm, accountFormCancelDelete, c.session.ID)
	}
	v.CSRFToken = a.pages.CSRFToken(w, r, c.realm, accountFormDelete, c.session.ID)
	v.GraceDays = int(accountDeletionGrace / (24 * time.Hour))
	v.Action, v.CancelAction = base+"/delete-account", base+"/cancel-delete-account"
	v.ExportURL, v.BackURL = base+"/data-export", base+"/"
	return a.pages.Render(w, r, status, ui.AccountDelete(a.pages.Page("account.delete.title"), v))
}

// accountDeleteBody is what POST /account/delete-account takes: a Bearer
// token alone cannot delete an account, its owner's password must confirm.
type accountDeleteBody struct {
	CurrentPassword *string `json:"currentPassword"`
}

// accountDeleteRequest schedules the deletion of the caller's account at
// the end of the grace window: 202 with the status for the API, back to
// the delete-account page for a browser. The user's sessions stay, so
// that they can come back and cancel from wherever they are signed in.
func (a *App) accountDeleteRequest(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	ctx := r.Context()
	var body accountDeleteBody
	if c.api {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	} else {
		if err := a.accountForm(r, c, accountFormDelete); err != nil {
			return err
		}
		body.CurrentPassword = formValue(r, "currentPassword")
	}
	d, err := a.accountDeletion(ctx, c)
	if err != nil {
		return err
	} else if d != nil { // a browser's second click: the page shows the one scheduled
		return withPage(errDeletionScheduled, accountGoTo(c.realm, "/delete-account"))
	}
	password := ""
	set(&password, body.CurrentPassword)
	if err := a.checkCurrentPassword(ctx, r, c, password); err != nil {
		return withPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			text := a.fieldText(r, c.realm, e)
			v := ui.AccountDeleteView{PasswordError: text}
			if e.Field == "" {
				v = ui.AccountDeleteView{Error: text}
			}
			return a.renderAccountDelete(w, r, c, e.Status, nil, v)
		})
	}
	now := a.now()
	d = &store.AccountDeletion{UserID: c.user.ID, RealmID: c.realm.ID, RequestedAt: now.UnixMilli(),
		DeleteAt: now.Add(accountDeletionGrace).UnixMilli()}
	if err := a.store.ScheduleAccountDeletion(ctx, d); errors.Is(err, store.ErrConflict) {
		return errDeletionScheduled
	} else if err != nil {
		return err
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventDeleteAccountScheduled, UserID: c.user.ID, ClientID: c.clientID,
		SessionID: c.sessionID(), IPAddress: a.clientIP(r), Details: map[string]string{"deleteAt": strconv.FormatInt(d.DeleteAt, 10)}})
	if c.api {
		httpx.WriteJSON(w, http.StatusAccepted, toAccountDeletionRep(d))
		return nil
	}
	return accountRedirect(w, r, c.realm, "/delete-account", "scheduled")
}

// accountCancelDelete cancels the scheduled deletion of the caller's
// account: 200 with the status for the API (404 when none is scheduled),
// back to the delete-account page for a browser.
func (a *App) accountCancelDelete(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	ctx := r.Context()
	if !c.api {
		if err := a.accountForm(r, c, accountFormCancelDelete); err != nil {
			return err
		}
	}
	err := a.store.CancelAccountDeletion(ctx, c.realm.ID, c.user.ID)
	if errors.Is(err, store.ErrNotFound) { // for a browser: cancelled already, in another tab
		return withPage(errNoDeletion, accountGoTo(c.realm, "/delete-account"))
	} else if err != nil {
		return err
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventDeleteAccountCancelled, UserID: c.user.ID, ClientID: c.clientID,
		SessionID: c.sessionID(), IPAddress: a.clientIP(r)})
	if c.api {
		httpx.WriteJSON(w, http.StatusOK, toAccountDeletionRep(nil))
		return nil
	}
	return accountRedirect(w, r, c.realm, "/delete-account", "cancelled")
}

// deleteDueAccounts deletes the accounts whose grace window has ended, by
// the admin API's path, and records DELETE_ACCOUNT for each.
func (a *App) deleteDueAccounts(ctx context.Context) {
	now := a.now().UnixMilli()
	deleted := 0
	for {
		due, err := a.store.DueAccountDeletions(ctx, now, accountDeletionBatch)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error("reading due account deletions failed", "err", err)
			}
			return
		}
		failed := false
		for _, d := range due {
			if err := a.deleteDueAccount(ctx, d, now); err != nil {
				failed = true
				if ctx.Err() == nil {
					a.log.Error("deleting an account failed", "realm", d.RealmName, "user", d.UserID, "err", err)
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
		a.log.Info("deleted accounts at their owners' request", "count", deleted)
	}
}

// deleteDueAccount deletes the account of d, provided its deletion is
// still scheduled and due: the user may have cancelled since it was read.
func (a *App) deleteDueAccount(ctx context.Context, d *store.AccountDeletion, now int64) error {
	realm, err := a.store.GetRealm(ctx, d.RealmName)
	if err != nil {
		return err
	}
	var user *store.User
	err = a.store.Tx(ctx, func(tx *store.Store) error {
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
		return a.id.DeleteUser(ctx, tx, realm, user)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // cancelled, rescheduled or deleted meanwhile
	} else if err != nil {
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventDeleteAccount, UserID: user.ID,
		Details: map[string]string{"username": user.Username, "requestedAt": strconv.FormatInt(d.RequestedAt, 10)}})
	return nil
}
