package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Device authorization states (RFC 8628).
const (
	DevicePending  = "pending"
	DeviceApproved = "approved"
	DeviceDenied   = "denied"
)

// DeviceSlowDownStep is how many seconds a device's polling interval grows
// each time it polls too fast: RFC 8628 §3.5 fixes it at 5.
const DeviceSlowDownStep = 5

// DeviceAuthorization is one device authorization request. The device code
// is a bearer secret, so only its SHA-256 is stored; the user code is
// short and typed by people, so it is stored as it is compared: upper case,
// without the dash.
type DeviceAuthorization struct {
	DeviceCodeHash []byte // HashToken of the device code
	UserCode       string
	RealmID        string
	ClientID       string // the client's internal ID
	Scopes         []string
	Status         string // DevicePending, DeviceApproved or DeviceDenied
	UserID         string // who approved; "" otherwise
	AuthTime       int64  // when the approving user authenticated; Unix milliseconds, as are the times below
	Interval       int    // seconds the device must wait between polls
	LastPollAt     int64  // 0 until the first poll
	CreatedAt      int64
	ExpiresAt      int64

	// Filled by reads, for the verification page.
	PublicClientID string
	ClientName     string
}

// DevicePoll is what a poll of the token endpoint found.
type DevicePoll int

const (
	DevicePollPending  DevicePoll = iota // not decided yet
	DevicePollSlowDown                   // not decided yet, and polled too fast: Interval has grown
	DevicePollApproved                   // approved; the authorization is consumed
	DevicePollDenied                     // denied
	DevicePollExpired                    // expired before it was redeemed
)

const deviceColumns = `d.device_code_hash, d.user_code, d.realm_id, d.client_id, d.scopes, d.status, d.user_id,
	d.auth_time, d.interval_seconds, d.last_poll_at, d.created_at, d.expires_at, c.client_id, c.name`

const deviceSelect = "SELECT " + deviceColumns + " FROM device_authorizations d JOIN clients c ON c.id = d.client_id"

func scanDeviceAuthorization(row scanner) (*DeviceAuthorization, error) {
	var d DeviceAuthorization
	var user sql.NullString
	var scopes string
	err := row.Scan(&d.DeviceCodeHash, &d.UserCode, &d.RealmID, &d.ClientID, &scopes, &d.Status, &user, &d.AuthTime,
		&d.Interval, &d.LastPollAt, &d.CreatedAt, &d.ExpiresAt, &d.PublicClientID, &d.ClientName)
	if err != nil {
		return nil, mapErr(err)
	}
	d.UserID = user.String
	if err := json.Unmarshal([]byte(scopes), &d.Scopes); err != nil {
		return nil, fmt.Errorf("decode scopes of device authorization %s: %w", d.UserCode, err)
	}
	return &d, nil
}

// CreateDeviceAuthorization stores a new pending authorization. Its client
// must be of its realm (else ErrNotFound). A user code already taken, even
// by an expired authorization not yet purged, is an ErrConflict on column
// user_code: the caller draws another.
func (s *Store) CreateDeviceAuthorization(ctx context.Context, d *DeviceAuthorization) error {
	if len(d.DeviceCodeHash) != sha256.Size {
		return fmt.Errorf("device authorization %s: the hash must be %d bytes: store HashToken(code), never the code",
			d.UserCode, sha256.Size)
	}
	return s.Tx(ctx, func(tx *Store) error {
		var clients int
		err := tx.w.QueryRowContext(ctx, "SELECT count(*) FROM clients WHERE id = $1 AND realm_id = $2",
			d.ClientID, d.RealmID).Scan(&clients)
		if err != nil {
			return fmt.Errorf("create device authorization %s: %w", d.UserCode, mapErr(err))
		}
		if clients == 0 {
			return fmt.Errorf("create device authorization %s: client %s: %w", d.UserCode, d.ClientID, ErrNotFound)
		}
		d.Status, d.UserID, d.AuthTime, d.LastPollAt = DevicePending, "", 0, 0
		_, err = tx.w.ExecContext(ctx, `INSERT INTO device_authorizations (device_code_hash, user_code, realm_id,
			client_id, scopes, status, interval_seconds, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			d.DeviceCodeHash, d.UserCode, d.RealmID, d.ClientID, jsonList(d.Scopes), d.Status, d.Interval,
			d.CreatedAt, d.ExpiresAt)
		if err != nil {
			return fmt.Errorf("create device authorization %s: %w", d.UserCode, mapErr(err))
		}
		return nil
	})
}

// DeviceAuthorizationByUserCode finds an authorization of the realm by its
// user code, whatever its state and expiry.
func (s *Store) DeviceAuthorizationByUserCode(ctx context.Context, realmID, userCode string) (*DeviceAuthorization, error) {
	d, err := scanDeviceAuthorization(s.r.QueryRowContext(ctx,
		deviceSelect+" WHERE d.realm_id = $1 AND d.user_code = $2", realmID, userCode))
	if err != nil {
		return nil, fmt.Errorf("device authorization %s: %w", userCode, err)
	}
	return d, nil
}

// ApproveDeviceAuthorization records that user approved the authorization
// with this user code, having authenticated at authTime. Only a pending
// authorization live at now can be decided, and only by a user of its
// realm; anything else is ErrNotFound.
func (s *Store) ApproveDeviceAuthorization(ctx context.Context, realmID, userCode, userID string, authTime, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE device_authorizations SET status = $1, user_id = $2, auth_time = $3
		WHERE realm_id = $4 AND user_code = $5 AND status = $6 AND expires_at > $7
			AND EXISTS (SELECT 1 FROM users u WHERE u.id = $2 AND u.realm_id = $4)`,
		DeviceApproved, userID, authTime, realmID, userCode, DevicePending, now)
	if err != nil {
		return fmt.Errorf("approve device authorization %s: %w", userCode, mapErr(err))
	}
	return affectedOne(res, "pending device authorization "+userCode+" and user "+userID)
}

// DenyDeviceAuthorization records that the authorization with this user
// code was refused. Only a pending authorization live at now can be
// decided; anything else is ErrNotFound.
func (s *Store) DenyDeviceAuthorization(ctx context.Context, realmID, userCode string, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE device_authorizations SET status = $1
		WHERE realm_id = $2 AND user_code = $3 AND status = $4 AND expires_at > $5`,
		DeviceDenied, realmID, userCode, DevicePending, now)
	if err != nil {
		return fmt.Errorf("deny device authorization %s: %w", userCode, mapErr(err))
	}
	return affectedOne(res, "pending device authorization "+userCode)
}

// PollDeviceAuthorization is one poll of the token endpoint by clientID
// (internal ID) with the device code of this hash, at now, in one
// transaction. A code unknown in the realm, or another client's, is
// ErrNotFound. It returns the authorization as the poll leaves it:
//   - denied: DevicePollDenied, and nothing changes, so that a client
//     retrying the request (as golang.org/x/oauth2 does while it detects
//     how to authenticate) still learns of the denial;
//   - expired: DevicePollExpired, and nothing changes;
//   - approved: DevicePollApproved, and the authorization is deleted, so
//     that a device code is redeemed at most once;
//   - pending: the poll is recorded, and if it came sooner than Interval
//     after the previous one, Interval grows by DeviceSlowDownStep and the
//     answer is DevicePollSlowDown (RFC 8628 §3.5).
func (s *Store) PollDeviceAuthorization(ctx context.Context, realmID string, deviceCodeHash []byte, clientID string, now int64) (*DeviceAuthorization, DevicePoll, error) {
	var d *DeviceAuthorization
	var poll DevicePoll
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		d, err = scanDeviceAuthorization(tx.w.QueryRowContext(ctx,
			deviceSelect+" WHERE d.realm_id = $1 AND d.device_code_hash = $2", realmID, deviceCodeHash))
		if err != nil {
			return fmt.Errorf("device authorization: %w", err)
		}
		switch {
		case d.ClientID != clientID:
			return fmt.Errorf("device authorization %s of another client: %w", d.UserCode, ErrNotFound)
		case d.Status == DeviceDenied:
			poll = DevicePollDenied
			return nil
		case d.ExpiresAt <= now:
			poll = DevicePollExpired
			return nil
		case d.Status == DeviceApproved:
			poll = DevicePollApproved
			_, err := tx.w.ExecContext(ctx, "DELETE FROM device_authorizations WHERE device_code_hash = $1", deviceCodeHash)
			if err != nil {
				return fmt.Errorf("redeem device authorization %s: %w", d.UserCode, mapErr(err))
			}
			return nil
		}
		poll = DevicePollPending
		if d.LastPollAt != 0 && now-d.LastPollAt < int64(d.Interval)*1000 {
			poll = DevicePollSlowDown
			d.Interval += DeviceSlowDownStep
		}
		d.LastPollAt = now
		_, err = tx.w.ExecContext(ctx, `UPDATE device_authorizations SET last_poll_at = $1, interval_seconds = $2
			WHERE device_code_hash = $3`, d.LastPollAt, d.Interval, deviceCodeHash)
		if err != nil {
			return fmt.Errorf("record poll of device authorization %s: %w", d.UserCode, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return d, poll, nil
}

// DeleteExpiredDeviceAuthorizations removes the authorizations of every
// realm that expired by before and counts them.
func (s *Store) DeleteExpiredDeviceAuthorizations(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM device_authorizations WHERE expires_at <= $1", before)
	return rowsAffected(res, err, "delete expired device authorizations")
}
