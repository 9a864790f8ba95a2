package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// loadConns are the load generator's keep-alive connections. A request
// takes one, is written whole and its response read whole on it, with
// net/http's own request writer and response reader. http.Transport runs
// two goroutines per connection and hands every request and response
// between them: at 7,000 requests/s on the two cores the server also
// runs on, that hand-over took a third of the machine.
type loadConns struct {
	addrs []string       // host:port of each server, dialled in turn
	next  atomic.Uint64  // the count of dials: which server the next one reaches
	idle  chan *loadConn // nil entries: connections not dialled yet, or closed
}

type loadConn struct {
	net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// newLoadConns makes n connections, spread over the servers at addrs as a
// load balancer would spread them.
func newLoadConns(addrs []string, n int) *loadConns {
	p := &loadConns{addrs: addrs, idle: make(chan *loadConn, n)}
	for range n {
		p.idle <- nil
	}
	return p
}

// loadRequestTimeout bounds one request, as the old client's timeout did.
const loadRequestTimeout = 60 * time.Second

// roundTrip sends req and reads the whole response. A connection that
// failed, or that the server asked to close, is closed and replaced by a
// new one on its next use.
func (p *loadConns) roundTrip(req *http.Request) (*http.Response, []byte, error) {
	c := <-p.idle
	if c == nil {
		addr := p.addrs[(p.next.Add(1)-1)%uint64(len(p.addrs))]
		nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			p.idle <- nil
			return nil, nil, err
		}
		c = &loadConn{Conn: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}
	}
	resp, body, err := c.exchange(req)
	if err != nil || resp.Close {
		c.Close()
		c = nil
	}
	p.idle <- c
	return resp, body, err
}

func (c *loadConn) exchange(req *http.Request) (*http.Response, []byte, error) {
	if err := c.SetDeadline(time.Now().Add(loadRequestTimeout)); err != nil {
		return nil, nil, err
	}
	if err := req.Write(c.w); err != nil {
		return nil, nil, fmt.Errorf("write request: %w", err)
	}
	if err := c.w.Flush(); err != nil {
		return nil, nil, fmt.Errorf("write request: %w", err)
	}
	resp, err := http.ReadResponse(c.r, req)
	if err != nil {
		return nil, nil, fmt.Errorf("read response: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("read response: %w", err)
	}
	return resp, body, nil
}

// close closes the connections, once every request has returned its own.
func (p *loadConns) close() {
	for {
		select {
		case c := <-p.idle:
			if c != nil {
				c.Close()
			}
		default:
			return
		}
	}
}
