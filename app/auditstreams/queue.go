package auditstreams

import (
	"context"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// Wants says whether an enabled stream of the realm takes events of type
// t (bus.Subscriber).
func (s *Service) Wants(ctx context.Context, realm *store.Realm, t bus.Type) bool {
	streams, err := s.enabledStreams(ctx, realm.ID)
	if err != nil {
		return true // let Queue meet the error and fail the event's transaction
	}
	return takes(streams, t)
}

func takes(streams []*store.AuditStream, t bus.Type) bool {
	for _, a := range streams {
		if bus.Matches(a.Events, t) {
			return true
		}
	}
	return false
}

// Queue writes, in tx, the event's one record for all the realm's streams
// (bus.Subscriber): each stream reads the realm's records after its
// cursor, so one row serves them all.
func (s *Service) Queue(ctx context.Context, tx *store.Store, e *bus.Event) (bool, error) {
	streams, err := s.enabledStreams(ctx, e.Realm.ID)
	if err != nil || !takes(streams, e.Type) {
		return false, err
	}
	body, err := e.JSON()
	if err != nil {
		return false, err
	}
	return true, tx.AddAuditRecord(ctx, &store.AuditRecord{RealmID: e.Realm.ID, EventID: e.ID, EventType: string(e.Type),
		CreatedAt: e.Time.UnixMilli(), Payload: body})
}
