package app

import (
	"log/slog"
	"os"
	"testing"

	"github.com/idenplane/idenplane/store/pgtest"
)

// TestMain silences the OpenID Connect library, which logs every request
// error through the default logger; the App's own logs go to t.Output().
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(pgtest.Main(m))
}
