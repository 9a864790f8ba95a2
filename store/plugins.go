package store

import (
	"context"
	"fmt"
)

// PluginState is what an administrator or a failure made of a plugin
// (app/plugins), kept across restarts by the plugin's name.
type PluginState struct {
	Name      string
	State     string // "enabled", "disabled" or "failed"
	Reason    string // why it failed; "" otherwise
	UpdatedAt int64  // Unix milliseconds
}

// GetPluginState finds the stored state of the plugin name; ErrNotFound
// when none is stored.
func (s *Store) GetPluginState(ctx context.Context, name string) (*PluginState, error) {
	var p PluginState
	err := s.r.QueryRowContext(ctx, "SELECT name, state, reason, updated_at FROM plugins WHERE name = $1", name).
		Scan(&p.Name, &p.State, &p.Reason, &p.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, mapErr(err))
	}
	return &p, nil
}

// ListPluginStates lists the stored states, by name.
func (s *Store) ListPluginStates(ctx context.Context) ([]*PluginState, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT name, state, reason, updated_at FROM plugins ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("list plugins: %w", err)
	}
	defer rows.Close()
	var out []*PluginState
	for rows.Next() {
		var p PluginState
		if err := rows.Scan(&p.Name, &p.State, &p.Reason, &p.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, &p)
	}
	return out, rows.Err()
}

// SavePluginState stores p, replacing the plugin's state stored before.
func (s *Store) SavePluginState(ctx context.Context, p *PluginState) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO plugins (name, state, reason, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET state = excluded.state, reason = excluded.reason, updated_at = excluded.updated_at`,
		p.Name, p.State, p.Reason, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("save plugin %s: %w", p.Name, mapErr(err))
	}
	return nil
}

// DeletePluginState forgets the plugin's stored state; ErrNotFound when
// none was stored.
func (s *Store) DeletePluginState(ctx context.Context, name string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM plugins WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("delete plugin %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("plugin %s: %w", name, ErrNotFound)
	}
	return nil
}
