package console

import (
	"net/url"
	"strconv"
	"time"
)

func pathEscape(s string) string { return url.PathEscape(s) }

// when shows a time in Unix milliseconds, in UTC.
func when(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") + " UTC"
}

func itoa(n int) string { return strconv.Itoa(n) }
