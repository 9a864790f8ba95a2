package saml

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// written is the outcome of a response's write: committed is to be called
// once the response goes out.
type written struct {
	committed func()
	err       error
}

// startWrite writes what a response commits to, in the background: req's
// ID in the replay cache, the SAML session ss and the login event e, in
// one transaction that concurrent responses share (GroupTx), so that each
// pays a share of one disk flush. The channel gives the outcome once the
// transaction has committed.
func (s *Service) startWrite(ctx context.Context, realm *store.Realm, req *request, ss *store.SAMLSession,
	e store.LoginEvent) <-chan written {
	out := make(chan written, 1)
	go func() {
		w := written{committed: func() {}}
		w.err = s.deps.Store.GroupTx(ctx, func(tx *store.Store) error {
			if err := s.recordRequest(ctx, tx, realm, req); err != nil {
				return err
			}
			if err := tx.CreateSAMLSession(ctx, ss); err != nil {
				return err
			}
			if s.deps.LoginEventIn == nil {
				return nil
			}
			var err error
			w.committed, err = s.deps.LoginEventIn(ctx, tx, realm, e)
			return err
		})
		out <- w
	}()
	return out
}
