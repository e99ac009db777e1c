package join

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDocker puts on PATH a docker whose inspect knows one container,
// name, with settings as docker prints them.
func fakeDocker(t *testing.T, name, settings string) {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
# docker inspect --type container --format '{{json .NetworkSettings}}' NAME
[ "$1 $2 $3" = "inspect --type container" ] || { echo "unexpected: $*" >&2; exit 2; }
[ "$6" = %q ] || { echo "Error: No such container: $6" >&2; exit 1; }
cat <<'JSON'
%s
JSON
`, name, settings)
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestRouteToContainer: a hub URL whose host is a container's name, which
// does not resolve here, is reached at the container's address on its
// network, or else at its published port, keeping the URL's host.
func TestRouteToContainer(t *testing.T) {
	var hosts []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		fmt.Fprint(w, "hub")
	}))
	defer srv.Close()
	_, srvPort, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	closed := closedPort(t)
	const name = "flotilla-join-test-hub.invalid"

	get := func(t *testing.T, hubURL string) error {
		t.Helper()
		r, err := routeToContainer(context.Background(), hubURL)
		if err != nil {
			return err
		}
		if r == nil {
			return errors.New("no route")
		}
		c := &http.Client{Transport: &http.Transport{
			DialContext:     r.dial,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test checks where requests go
		}}
		res, err := c.Get(hubURL)
		if err != nil {
			return err
		}
		return res.Body.Close()
	}

	t.Run("its address on its network", func(t *testing.T) {
		fakeDocker(t, name, `{"Ports":{},"Networks":{"flotilla":{"IPAddress":"127.0.0.1"}}}`)
		hosts = nil
		if err := get(t, "https://"+name+":"+srvPort); err != nil {
			t.Fatal(err)
		}
		if len(hosts) != 1 || hosts[0] != name+":"+srvPort {
			t.Errorf("requests with Host %v, want %s:%s", hosts, name, srvPort)
		}
	})
	t.Run("its published port when the network address does not answer", func(t *testing.T) {
		fakeDocker(t, name, fmt.Sprintf(`{"Ports":{"%s/tcp":[{"HostIp":"0.0.0.0","HostPort":"%s"}]},"Networks":{"flotilla":{"IPAddress":"127.0.0.1"}}}`, closed, srvPort))
		hosts = nil
		if err := get(t, "https://"+name+":"+closed); err != nil {
			t.Fatal(err)
		}
		if len(hosts) != 1 {
			t.Errorf("%d requests reached the hub, want 1", len(hosts))
		}
	})
	t.Run("no such container", func(t *testing.T) {
		fakeDocker(t, "another", `{}`)
		if r, err := routeToContainer(context.Background(), "https://"+name+":6443"); r != nil || err != nil {
			t.Errorf("route %v, error %v: want neither", r, err)
		}
	})
	t.Run("an IP address is dialled as it is", func(t *testing.T) {
		fakeDocker(t, "127.0.0.1", `{"Networks":{"flotilla":{"IPAddress":"192.0.2.1"}}}`)
		if r, err := routeToContainer(context.Background(), "https://127.0.0.1:6443"); r != nil || err != nil {
			t.Errorf("route %v, error %v: want neither", r, err)
		}
	})
}

// TestUnreachableHint: a host that does not resolve, and is no container
// here, gets the way to run join where it resolves.
func TestUnreachableHint(t *testing.T) {
	h := &hubContact{url: "https://hub:6443"}
	err := &url.Error{Op: "Get", URL: "https://hub:6443/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "hub", IsNotFound: true}}}
	got := h.explainClusterInfo(err).Error()
	for _, want := range []string{"cannot reach the hub at https://hub:6443", "hub does not resolve on this machine", "docker run --rm --network NETWORK", "join ..."} {
		if !strings.Contains(got, want) {
			t.Errorf("message %q lacks %q", got, want)
		}
	}
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}
