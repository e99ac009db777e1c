package members

import (
	"context"
	"fmt"
	"io"
)

// Removal is the outcome of a member remove.
type Removal struct {
	// Removed is the member that left.
	Removed Member `json:"removed"`
	// Remaining are the members after the removal, as listed before it.
	Remaining []Member `json:"remaining"`
}

// Remove removes the member named (or with the ID) nameOrID from the cluster.
func (c *Cluster) Remove(ctx context.Context, nameOrID string) (Removal, error) {
	members, err := c.List(ctx)
	if err != nil {
		return Removal{}, err
	}
	target, err := find(members, nameOrID)
	if err != nil {
		return Removal{}, err
	}
	if err := checkRemove(members, target); err != nil {
		return Removal{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := c.client.MemberRemove(ctx, target.id); err != nil {
		return Removal{}, explain(err, "remove member "+target.String())
	}
	r := Removal{Removed: target}
	for _, m := range members {
		if m.id != target.id {
			r.Remaining = append(r.Remaining, m)
		}
	}
	return r, nil
}

// checkRemove refuses a removal after which the cluster could not serve:
// the last voting member, or one whose removal leaves fewer answering
// voting members than a majority of those that remain.
func checkRemove(members []Member, target Member) error {
	if target.Learner {
		return nil
	}
	var after, answering []Member
	for _, m := range voters(members) {
		if m.id == target.id {
			continue
		}
		after = append(after, m)
		if m.Answers {
			answering = append(answering, m)
		}
	}
	if len(after) == 0 {
		return fmt.Errorf("%s is the last voting member of the etcd cluster: removing it would leave no store at all; add its replacement first (flotilla-hub member add), or stop the hub instead", target)
	}
	if need := quorum(len(after)); len(answering) < need {
		var silent []Member
		for _, m := range after {
			if !m.Answers {
				silent = append(silent, m)
			}
		}
		return fmt.Errorf("removing %s would leave %d voting members, of which %s on its peer URL (%s), and etcd needs %d of them to agree on anything: the cluster would stop serving. Start %s again (or, if it is lost for good, remove it first), then remove %s", target, len(after), answerCount(len(answering)), names(answering), need, names(silent), target)
	}
	return nil
}

// WriteText prints the outcome for a person.
func (r Removal) WriteText(w io.Writer) {
	v := voters(r.Remaining)
	fmt.Fprintf(w, "Removed %s (ID %s) from the etcd cluster: %d voting members remain (%s), of which %d must agree.\n", r.Removed, r.Removed.ID, len(v), names(v), quorum(len(v)))
	if r.Removed.Local {
		fmt.Fprintln(w, "It was the member of this machine: its hub stops now; run member commands on another member.")
	}
	fmt.Fprintf(w, `If %s's process still runs, its etcd leaves the cluster and stops serving,
and its hub exits saying it was removed. Its data directory belongs to the
old cluster: before the machine may rejoin, empty it (keep a copy of its
pki/ CA and keys, or copy them again from a member), then add it anew with
flotilla-hub member add.
`, r.Removed)
}

func answerCount(n int) string {
	if n == 1 {
		return "1 answers"
	}
	return fmt.Sprintf("%d answer", n)
}
