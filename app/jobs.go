package app

import (
	"context"
	"time"
)

// jobInterval is how often RunJobs repeats its work.
const jobInterval = time.Hour

// RunJobs does the server's periodic upkeep until ctx is done: it deletes
// the events past their realm's retention at once and then every hour.
func (a *App) RunJobs(ctx context.Context) {
	t := time.NewTicker(jobInterval)
	defer t.Stop()
	for {
		a.expireEvents(ctx)
		a.rotateDueKeys(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *App) expireEvents(ctx context.Context) {
	login, admin, err := a.store.DeleteExpiredEvents(ctx, a.now())
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error("deleting expired events failed", "err", err)
		}
		return
	}
	a.log.Info("deleted expired events", "login", login, "admin", admin)
}
