package registration

import (
	"context"
	"net"
	"testing"

	. "github.com/onsi/gomega"
)

// listen returns a listener on a free loopback port that accepts and holds
// connections, and the address of a port that refuses them.
func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	return l, refused
}

func TestHubDialerFailsOverAndStays(t *testing.T) {
	g := NewWithT(t)
	live, dead := listen(t)
	d := newHubDialer("https://"+dead, []string{live.Addr().String()})
	g.Expect(d).NotTo(BeNil())

	conn, err := d.DialContext(context.Background(), "tcp", dead)
	g.Expect(err).NotTo(HaveOccurred(), "the kubeconfig's address refuses, the other member answers")
	g.Expect(conn.RemoteAddr().String()).To(Equal(live.Addr().String()))
	conn.Close()
	g.Expect(d.last.Load()).To(BeEquivalentTo(1), "the next dial starts at the address that answered")

	live.Close()
	_, err = d.DialContext(context.Background(), "tcp", dead)
	g.Expect(err).To(HaveOccurred())
	g.Expect(hubUnreachable(err)).To(BeTrue(), "no address answering reads as an unreachable hub: %v", err)
}

func TestHubDialerLeavesOtherAddressesAlone(t *testing.T) {
	g := NewWithT(t)
	live, dead := listen(t)
	g.Expect(newHubDialer("https://"+dead, nil)).To(BeNil(), "one address: dialled as before")
	d := newHubDialer("https://"+live.Addr().String(), []string{live.Addr().String()})
	g.Expect(d).To(BeNil(), "the same address twice is one address")

	d = newHubDialer("https://hub.example:6443", []string{live.Addr().String()})
	_, err := d.DialContext(context.Background(), "tcp", dead)
	g.Expect(err).To(HaveOccurred(), "an address that is not the hub's (a proxy's) is dialled alone")
}
