package framework

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestRSSParts reads this process's own status: its anonymous memory and
// its binary's pages make up its RSS with shared memory (none here).
func TestRSSParts(t *testing.T) {
	anon, file, err := RSSPartsOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	rss, err := RSSOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if anon <= 0 || file <= 0 {
		t.Fatalf("RssAnon %d, RssFile %d: want both above zero for a running Go binary", anon, file)
	}
	// The three counters are read one after the other from one file: the
	// RSS may differ by what the process touched between two reads of it.
	if diff := rss - anon - file; diff < -(8<<20) || diff > 8<<20 {
		t.Fatalf("VmRSS %d, RssAnon + RssFile %d: want the same within 8 MiB", rss, anon+file)
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tflotilla-hub\nVmRSS:\t 1968552 kB\nRssAnon:\t 1726816 kB\nRssFile:\t  241736 kB\nThreads:\t10\n"
	got, err := parseStatusKB(strings.NewReader(status), "RssAnon", "RssFile")
	if err != nil {
		t.Fatal(err)
	}
	if got["RssAnon"] != 1726816*1024 || got["RssFile"] != 241736*1024 || len(got) != 2 {
		t.Fatalf("got %v", got)
	}
	if _, err := parseStatusKB(strings.NewReader(status), "VmHWM"); err == nil || !strings.Contains(err.Error(), "no VmHWM line") {
		t.Fatalf("a missing field: got %v, want no VmHWM line", err)
	}
	if _, err := parseStatusKB(strings.NewReader("VmRSS:\tlots\n"), "VmRSS"); err == nil {
		t.Fatal("a field that is no number: got no error")
	}
}

// TestFreePort: a port a process can bind, outside the range the kernel
// gives outbound connections.
func TestFreePort(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if low > freePortFloor+1000 && (port < freePortFloor || port >= low) {
			t.Fatalf("port %d: want one in [%d, %d)", port, freePortFloor, low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d: %v", port, err)
		}
		l.Close()
	}
}
