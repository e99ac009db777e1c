// Command dnsq asks one DNS server one question and prints the answer's
// status and records, for machines without dig:
//
//	dnsq [-server 127.0.0.1:53] [-type A] [-tcp] NAME
//
// It prints "status: <RCODE>" and then each answer record on a line of its
// own in zone-file form (as `dig +noall +answer` does), then the additional
// section's records after a line ";; ADDITIONAL". It exits 0 whenever the
// server answered (NXDOMAIN included), 1 when it did not.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/miekg/dns"
)

func main() {
	server := flag.String("server", "127.0.0.1:53", "the DNS server, host:port")
	qtype := flag.String("type", "A", "the record type to ask for: A, AAAA, SRV, TXT, PTR, ...")
	tcp := flag.Bool("tcp", false, "ask over TCP instead of UDP")
	timeout := flag.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: dnsq [flags] NAME\n\nAsks one DNS server one question and prints the status and the records.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	t, ok := dns.StringToType[strings.ToUpper(*qtype)]
	if !ok {
		fmt.Fprintf(os.Stderr, "dnsq: unknown record type %q: use A, AAAA, SRV, TXT, PTR or another type's name\n", *qtype)
		os.Exit(2)
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(flag.Arg(0)), t)
	c := &dns.Client{Timeout: *timeout}
	if *tcp {
		c.Net = "tcp"
	}
	r, _, err := c.Exchange(m, *server)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dnsq: no answer from %s for %s %s: %v\n", *server, flag.Arg(0), *qtype, err)
		os.Exit(1)
	}
	fmt.Printf("status: %s\n", dns.RcodeToString[r.Rcode])
	for _, rr := range r.Answer {
		fmt.Println(rr.String())
	}
	if len(r.Extra) > 0 {
		fmt.Println(";; ADDITIONAL")
		for _, rr := range r.Extra {
			if rr.Header().Rrtype == dns.TypeOPT {
				continue
			}
			fmt.Println(rr.String())
		}
	}
}
