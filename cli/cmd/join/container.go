package join

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// containerDialTimeout bounds each address tried for a container's name.
const containerDialTimeout = 3 * time.Second

// containerRoute is how this machine reaches a hub whose host is the name
// of a Docker container, which only the containers on its networks
// resolve: the container's addresses, as docker's DNS gives them to those
// containers, then the ports it publishes here.
type containerRoute struct {
	container string
	// addrs are host:port, in the order tried.
	addrs []string
	// via says, for each of addrs, what it is.
	via []string
}

// dial connects to the first of the route's addresses that answers; the
// TLS server name stays the URL's host, which the hub's certificate names.
func (r *containerRoute) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var errs []error
	for _, a := range r.addrs {
		d := net.Dialer{Timeout: containerDialTimeout}
		c, err := d.DialContext(ctx, network, a)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("container %s: %w", r.container, errors.Join(errs...))
}

func (r *containerRoute) String() string {
	parts := make([]string, len(r.addrs))
	for i := range r.addrs {
		parts[i] = r.addrs[i] + " (" + r.via[i] + ")"
	}
	return strings.Join(parts, ", then ")
}

// dockerSettings is the part of `docker inspect` that says where a
// container listens.
type dockerSettings struct {
	Ports    map[string][]struct{ HostIp, HostPort string }
	Networks map[string]struct{ IPAddress, GlobalIPv6Address string }
}

// routeToContainer returns how to reach hubURL's host as a Docker
// container when that host does not resolve on this machine; nil when it
// resolves, is an IP address, or names no container docker knows here.
func routeToContainer(ctx context.Context, hubURL string) (*containerRoute, error) {
	u, err := url.Parse(hubURL)
	if err != nil {
		return nil, err
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
	}
	if net.ParseIP(host) != nil {
		return nil, nil
	}
	if _, err := net.DefaultResolver.LookupHost(ctx, host); err == nil {
		return nil, nil
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		return nil, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, docker, "inspect", "--type", "container", "--format", "{{json .NetworkSettings}}", host)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// No such container, or no engine: the name is simply unknown here.
		return nil, nil
	}
	var s dockerSettings
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		return nil, fmt.Errorf("docker inspect %s: %w", host, err)
	}
	r := &containerRoute{container: host}
	names := make([]string, 0, len(s.Networks))
	for name := range s.Networks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, ip := range []string{s.Networks[name].IPAddress, s.Networks[name].GlobalIPv6Address} {
			if ip != "" {
				r.addrs = append(r.addrs, net.JoinHostPort(ip, port))
				r.via = append(r.via, "its address on network "+name)
			}
		}
	}
	for _, b := range s.Ports[port+"/tcp"] {
		ip := b.HostIp
		switch ip {
		case "", "0.0.0.0":
			ip = "127.0.0.1"
		case "::":
			ip = "::1"
		}
		r.addrs = append(r.addrs, net.JoinHostPort(ip, b.HostPort))
		r.via = append(r.via, "its port "+port+" published here")
	}
	if len(r.addrs) == 0 {
		return nil, fmt.Errorf("%s is the name of a Docker container with no address on a network and no published port %s: start it on a network (docker run --network ...) or with -p %s:%s", host, port, port, port)
	}
	return r, nil
}
