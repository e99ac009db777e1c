package members

import (
	"bytes"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
)

// cluster3 is three started voting members; hub-1 is local and leads.
func cluster3(answering ...string) []Member {
	in := []*etcdserverpb.Member{
		{ID: 0x3, Name: "hub-3", PeerURLs: []string{"https://10.0.0.13:2380"}, ClientURLs: []string{"http://127.0.0.1:40003"}},
		{ID: 0x1, Name: "hub-1", PeerURLs: []string{"https://10.0.0.11:2380"}, ClientURLs: []string{"http://127.0.0.1:40001"}},
		{ID: 0x2, Name: "hub-2", PeerURLs: []string{"https://10.0.0.12:2380"}, ClientURLs: []string{"http://127.0.0.1:40002"}},
	}
	answers := map[uint64]bool{}
	for _, m := range in {
		for _, a := range answering {
			if m.Name == a {
				answers[m.ID] = true
			}
		}
	}
	return toMembers(in, 0x1, 0x1, answers)
}

func TestToMembers(t *testing.T) {
	in := []*etcdserverpb.Member{
		{ID: 0xab, PeerURLs: []string{"https://10.0.0.14:2380"}, IsLearner: true},
		{ID: 0x2, Name: "hub-2", PeerURLs: []string{"https://10.0.0.12:2380"}},
		{ID: 0x1, Name: "hub-1", PeerURLs: []string{"https://10.0.0.11:2380"}},
	}
	got := toMembers(in, 0x2, 0x1, map[uint64]bool{0x1: true})
	if got[0].Name != "hub-1" || got[1].Name != "hub-2" || got[2].ID != "ab" {
		t.Fatalf("want sorted by name, not started last: %+v", got)
	}
	if !got[0].Local || got[0].Leader || !got[0].Answers || !got[1].Leader || got[1].Answers {
		t.Fatalf("local, leader and answers wrong: %+v", got)
	}
	if got[2].Started || !got[2].Learner {
		t.Fatalf("an added member that has not started has no name and is a learner: %+v", got[2])
	}
	var b bytes.Buffer
	if err := WriteTable(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME", "LEARNER", "hub-1 (this hub)", "ab"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFind(t *testing.T) {
	members := cluster3("hub-1", "hub-2", "hub-3")
	if m, err := find(members, "hub-2"); err != nil || m.id != 0x2 {
		t.Fatalf("by name: %+v, %v", m, err)
	}
	if m, err := find(members, "3"); err != nil || m.Name != "hub-3" {
		t.Fatalf("by ID: %+v, %v", m, err)
	}
	if _, err := find(members, "hub-9"); err == nil || !strings.Contains(err.Error(), "the members are hub-1, hub-2, hub-3") {
		t.Fatalf("want the members named, got %v", err)
	}
}

func TestCheckNewMember(t *testing.T) {
	cases := []struct {
		name, peer, want string
	}{
		{"hub-4", "https://10.0.0.14:2380", ""},
		{"hub-4", "https://10.0.0.14:2380/", ""},
		{"Hub_4", "https://10.0.0.14:2380", "member name \"Hub_4\""},
		{"hub-4", "", "--peer-url is required"},
		{"hub-4", "http://10.0.0.14:2380", "is not https://address:port"},
		{"hub-4", "https://10.0.0.14", "is not https://address:port"},
	}
	for _, c := range cases {
		got, err := checkNewMember(c.name, c.peer)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.name, c.peer, err)
		case c.want == "" && got != "https://10.0.0.14:2380":
			t.Errorf("%s: stored as %q", c.peer, got)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: want %q, got %v", c.name, c.peer, c.want, err)
		}
	}
}

func TestCheckAdd(t *testing.T) {
	all := cluster3("hub-1", "hub-2", "hub-3")
	notStarted := append(cluster3("hub-1", "hub-2", "hub-3"), Member{ID: "ab", id: 0xab, PeerURLs: []string{"https://10.0.0.15:2380"}, Learner: true})
	single := []Member{{Name: "flotilla", ID: "1", id: 1, PeerURLs: []string{"http://127.0.0.1:41000"}, Started: true, Local: true, Answers: true}}
	cases := []struct {
		name    string
		members []Member
		add     string
		peer    string
		want    string
	}{
		{"fine", all, "hub-4", "https://10.0.0.14:2380", ""},
		{"name taken", all, "hub-2", "https://10.0.0.14:2380", "a member named hub-2 exists already"},
		{"peer URL taken", all, "hub-4", "https://10.0.0.12:2380", "member hub-2 has the peer URL https://10.0.0.12:2380 already"},
		{"one not started", notStarted, "hub-4", "https://10.0.0.14:2380", "was added but has never started"},
		{"a voter is down", cluster3("hub-1", "hub-2"), "hub-4", "https://10.0.0.14:2380", "voting member hub-3 does not answer on its peer URL"},
		{"single hub", single, "hub-4", "https://10.0.0.14:2380", "runs a single embedded etcd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkAdd(c.members, c.add, c.peer)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want %q, got %v", c.want, err)
			}
		})
	}
}

func TestCheckRemove(t *testing.T) {
	two := cluster3("hub-1", "hub-2")[:2]
	learner := append(cluster3("hub-1", "hub-2", "hub-3"), Member{ID: "ab", id: 0xab, Learner: true})
	cases := []struct {
		name    string
		members []Member
		remove  string
		want    string
	}{
		{"a healthy member of three", cluster3("hub-1", "hub-2", "hub-3"), "hub-3", ""},
		{"the dead one of three", cluster3("hub-1", "hub-2"), "hub-3", ""},
		{"a live one while another is dead", cluster3("hub-1", "hub-2"), "hub-2", "removing hub-2 would leave 2 voting members, of which 1 answers on its peer URL (hub-1), and etcd needs 2"},
		{"one of two", two, "hub-2", ""},
		{"the last", two[:1], "hub-1", "hub-1 is the last voting member"},
		{"a learner", learner, "ab", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target, err := find(c.members, c.remove)
			if err != nil {
				t.Fatal(err)
			}
			err = checkRemove(c.members, target)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want %q, got %v", c.want, err)
			}
		})
	}
}

// The instructions name every member, the new one last, with the state
// existing, and the files the first members were started from.
func TestJoinInstructions(t *testing.T) {
	members := cluster3("hub-1", "hub-2")[:2] // hub-3 removed
	added := Member{Name: "hub-4", ID: "ab", id: 0xab, PeerURLs: []string{"https://10.0.0.14:2380"}, Learner: true}
	j := joinInstructions("/var/lib/flotilla/hub", members, added, "6443", []string{"10.0.0.11", "10.0.0.12", "10.0.0.13", "hub.example.com"})
	const initial = "hub-1=https://10.0.0.11:2380,hub-2=https://10.0.0.12:2380,hub-4=https://10.0.0.14:2380"
	if j.InitialCluster != initial {
		t.Fatalf("initial cluster %q, want %q", j.InitialCluster, initial)
	}
	args := strings.Join(j.Args, " ")
	for _, want := range []string{
		"--data-dir /var/lib/flotilla/hub", "--advertise-address 10.0.0.14", "--secure-port 6443",
		"--tls-san 10.0.0.11,10.0.0.12,10.0.0.13,hub.example.com,10.0.0.14",
		"--etcd-name hub-4", "--etcd-peer-url https://10.0.0.14:2380",
		"--etcd-initial-cluster " + initial, "--etcd-initial-cluster-state existing",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q: %s", want, args)
		}
	}
	if strings.Join(j.Files, " ") != "ca.crt ca.key sa.key sa.pub etcd/ca.crt etcd/ca.key" || j.HubServer != "10.0.0.14:6443" {
		t.Fatalf("files %v, hub server %s", j.Files, j.HubServer)
	}
	var b bytes.Buffer
	j.WriteText(&b)
	for _, want := range []string{"as a learner (ID ab", "ca.crt ca.key sa.key sa.pub etcd/ca.crt etcd/ca.key", "--etcd-initial-cluster-state existing", "flotilla-hub member remove ab"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
