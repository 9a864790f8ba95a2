package ldapfed

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/idenplane/idenplane/store"
)

// DefaultSyncTick is how often the periodic sync looks for providers
// whose syncPeriod has passed.
const DefaultSyncTick = 5 * time.Second

// StartPeriodicSync runs, until ctx ends, a full sync of each enabled
// provider with a syncPeriod and import on, every syncPeriod seconds after
// the start of its last sync (or its creation). Each runs in its own
// goroutine, so a slow directory holds up no other, and one at a time per
// provider (RunSync). It returns a function that waits for the syncs to
// stop.
func (s *Service) StartPeriodicSync(ctx context.Context) (wait func()) {
	tick := s.deps.SyncTick
	if tick <= 0 {
		tick = DefaultSyncTick
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			s.startDueSyncs(ctx, &wg)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return wg.Wait
}

func (s *Service) startDueSyncs(ctx context.Context, wg *sync.WaitGroup) {
	providers, err := s.deps.Store.AllFederationProviders(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.deps.Log.Error("periodic user federation sync: listing the providers failed", "err", err)
		}
		return
	}
	now := s.deps.Now()
	for _, p := range providers {
		if !s.due(p, now) {
			continue
		}
		wg.Go(func() {
			// One server of a fleet syncs a provider at a time; the others
			// find it running, or, once it ended, recorded and not due.
			_, _ = s.deps.Store.Exclusive(ctx, "ldap-sync:"+p.ID, func(ctx context.Context) error {
				s.syncIfDue(ctx, p.RealmID, p.ID)
				return nil
			})
		})
	}
}

// syncIfDue runs the periodic sync of the provider if it is still due, as
// read now.
func (s *Service) syncIfDue(ctx context.Context, realmID, id string) {
	p, err := s.deps.Store.GetFederationProvider(ctx, realmID, id)
	if err != nil || !s.due(p, s.deps.Now()) {
		return
	}
	realm, err := s.deps.Store.GetRealmByID(ctx, p.RealmID)
	if err != nil {
		return
	}
	// The outcome is logged and recorded with the provider.
	if _, err := s.RunSync(ctx, realm, p, ActionFull); err != nil && !errors.Is(err, ErrSyncRunning) && ctx.Err() == nil {
		s.deps.Log.Warn("periodic user federation sync failed", "realm", realm.Name, "provider", p.Name, "err", err)
	}
}

// due says whether p's periodic sync should start at now.
func (s *Service) due(p *store.FederationProvider, now time.Time) bool {
	if !p.Enabled || p.BindCredential == "" {
		return false
	}
	set, err := settingsOf(p)
	if err != nil || set.SyncPeriod <= 0 || !set.ImportEnabled {
		return false
	}
	last := p.CreatedAt
	if p.LastSync != "" {
		var res SyncResult
		if json.Unmarshal([]byte(p.LastSync), &res) == nil {
			last = res.StartedAt
		}
	}
	return !now.Before(time.UnixMilli(last).Add(time.Duration(set.SyncPeriod) * time.Second))
}
