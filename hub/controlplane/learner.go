package controlplane

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// promoteTimeout bounds how long a learner may take to catch up with the
// leader before its hub gives up; it receives the whole store first.
const promoteTimeout = 10 * time.Minute

// promoteLearner makes the embedded etcd, when it joined its cluster as a
// learner (flotilla-hub member add), a voting member once it has caught up
// with the leader. A learner serves no reads or writes to the API server,
// so the hub cannot start before. etcd's leader decides when the learner
// is in sync (90% of its log); the request goes to it over the peer
// connection, which the learner has, where the members' client URLs are
// each on its own machine's loopback.
func promoteLearner(ctx context.Context, e *embed.Etcd) error {
	if !e.Server.IsLearner() {
		return nil
	}
	logger := klog.FromContext(ctx)
	id := uint64(e.Server.MemberID())
	started := time.Now()
	logger.Info("This etcd member joined as a learner: promoting it to a voting member once it has caught up with the leader", "member", e.Server.MemberID())
	var last error
	lastLog := started
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, promoteTimeout, true, func(ctx context.Context) (bool, error) {
		if !e.Server.IsLearner() {
			return true, nil
		}
		select {
		case <-e.Server.StopNotify():
			return false, fmt.Errorf("etcd stopped while a learner (removed from the cluster?); see etcd.log")
		default:
		}
		_, last = e.Server.PromoteMember(ctx, id)
		if last == nil {
			// Applied once the local member learns of it; the next poll
			// sees it voting.
			return !e.Server.IsLearner(), nil
		}
		if time.Since(lastLog) >= 10*time.Second {
			logger.Info("Waiting for this etcd learner to catch up with the leader before promoting it", "waited", time.Since(started).Round(time.Second), "lastAttempt", last.Error())
			lastLog = time.Now()
		}
		return false, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("this etcd member is still a learner after %s: the leader would not promote it (last answer: %v); check that a majority of the voting members run (flotilla-hub member list on one of them)", promoteTimeout, last)
	}
	if err != nil {
		return err
	}
	logger.Info("This etcd member is now a voting member", "member", e.Server.MemberID(), "duration", time.Since(started).Round(time.Millisecond))
	return nil
}
