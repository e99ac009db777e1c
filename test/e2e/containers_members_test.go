package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/hub/members"
	"github.com/flotilla-io/flotilla/test/framework"
)

// memberCommand runs flotilla-hub member ARGS inside a member's container,
// against the hub running there, and returns its output.
func memberCommand(ctx context.Context, d *framework.Docker, m *hubMember, args ...string) (string, error) {
	return d.Command(ctx, append([]string{"exec", m.container.Name, "/usr/local/bin/flotilla-hub", "member"}, append(args, "--data-dir", home+"/hub")...)...)
}

var _ = Describe("Replacing a lost member of a hub of three embedded etcd members", Label("containers"), func() {
	It("removes the lost member, adds a new one that joins from a copy of the PKI and the printed flags, serves the whole store and counts in the quorum", func(ctx SpecContext) {
		started := time.Now()
		d := requireDocker(ctx)
		refs := imageRefs(ctx, d)
		hubNet, err := d.CreateNetwork(ctx, "hub")
		Expect(err).NotTo(HaveOccurred())
		hubs := startHubMembers(ctx, d, refs, hubNet, nil)
		GinkgoWriter.Printf("three members serving %s after the first started\n", time.Since(started).Round(time.Second))
		hub1 := hubs[0].client(ctx)
		before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "before-join"}, Data: map[string]string{"from": "hub-1"}}
		Expect(hub1.Create(ctx, before)).To(Succeed())

		By("losing the third member: killed, its data gone with its machine")
		_, err = d.Command(ctx, "kill", hubs[2].container.Name)
		Expect(err).NotTo(HaveOccurred())
		fresh := &hubMember{name: "hub-4", ip: hubNet.Addr(14)}
		peerURL := fmt.Sprintf("https://%s:%d", fresh.ip, etcdPeerPort)
		// etcd adds a member only while every voting member is connected.
		out, err := memberCommand(ctx, d, hubs[0], "add", fresh.name, "--peer-url", peerURL)
		Expect(err).To(MatchError(ContainSubstring("voting member hub-3 does not answer on its peer URL")), out)
		Expect(err).To(MatchError(ContainSubstring("flotilla-hub member remove hub-3")))
		// Nor may a live member go while hub-3 is down: one of two left.
		out, err = memberCommand(ctx, d, hubs[0], "remove", "hub-2")
		Expect(err).To(MatchError(ContainSubstring("the cluster would stop serving")), out)

		By("removing it through the first member, and adding its replacement")
		out, err = memberCommand(ctx, d, hubs[0], "remove", "hub-3")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("Removed hub-3"))
		out, err = memberCommand(ctx, d, hubs[0], "add", fresh.name, "--peer-url", peerURL, "-o", "json")
		Expect(err).NotTo(HaveOccurred())
		var join members.JoinInstructions
		Expect(json.Unmarshal([]byte(out), &join)).To(Succeed(), out)
		Expect(join.Member.Learner).To(BeTrue())
		Expect(join.InitialCluster).To(Equal(fmt.Sprintf("hub-1=https://%s:%d,hub-2=https://%s:%d,hub-4=%s", hubs[0].ip, etcdPeerPort, hubs[1].ip, etcdPeerPort, peerURL)))
		Expect(strings.Join(join.Args, " ")).To(ContainSubstring("--etcd-initial-cluster-state existing"))
		Expect(join.Files).To(ConsistOf("ca.crt", "ca.key", "sa.key", "sa.pub", "etcd/ca.crt", "etcd/ca.key"))

		By("starting the new member from the files and the flags that member add printed")
		pki := memberPKI{}
		for _, name := range join.Files {
			pki[name], err = hubs[0].container.CopyOut(ctx, join.FromPKIDir+"/"+name)
			Expect(err).NotTo(HaveOccurred())
		}
		joinStarted := time.Now()
		fresh.container, err = d.Start(ctx, framework.ContainerSpec{Name: fresh.name, Image: refs["flotilla-hub"], Network: hubNet, IP: fresh.ip,
			Publish: []int{hubPort}, Files: pki.files(), Args: append(join.Args, memberLease...)})
		Expect(err).NotTo(HaveOccurred())
		waitMemberServes(ctx, fresh, 3*time.Minute)
		joined := time.Since(joinStarted)
		output := fresh.container.Output(ctx)
		Expect(output).To(ContainSubstring("This etcd member is now a voting member"))
		for _, line := range strings.Split(output, "\n") {
			if strings.Contains(line, "This etcd member is now a voting member") {
				GinkgoWriter.Printf("hub-4: %s\n", line)
			}
		}

		By("the new member serves what was written before it joined, and what is written through it is read through the first")
		hub4 := fresh.client(ctx)
		got := &corev1.ConfigMap{}
		Expect(hub4.Get(ctx, client.ObjectKeyFromObject(before), got)).To(Succeed())
		Expect(got.Data).To(Equal(before.Data))
		via4 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "via-hub-4"}, Data: map[string]string{"from": "hub-4"}}
		Expect(hub4.Create(ctx, via4)).To(Succeed())
		Eventually(func() error { return hub1.Get(ctx, client.ObjectKeyFromObject(via4), &corev1.ConfigMap{}) }).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		out, err = memberCommand(ctx, d, hubs[0], "list", "-o", "json")
		Expect(err).NotTo(HaveOccurred())
		var list []members.Member
		Expect(json.Unmarshal([]byte(out), &list)).To(Succeed(), out)
		Expect(list).To(HaveLen(3))
		for i, name := range []string{"hub-1", "hub-2", "hub-4"} {
			Expect(list[i].Name).To(Equal(name))
			Expect(list[i].Started).To(BeTrue(), name)
			Expect(list[i].Learner).To(BeFalse(), name)
			Expect(list[i].Answers).To(BeTrue(), name)
		}

		By("killing the second original member: the first and the new one are a majority, and the hub keeps taking writes")
		_, err = d.Command(ctx, "kill", hubs[1].container.Name)
		Expect(err).NotTo(HaveOccurred())
		after := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "after-second-loss"}, Data: map[string]string{"from": "hub-1"}}
		// A write in flight when the etcd leader dies times out; sent
		// again after the election it succeeds (or was stored).
		Eventually(func() error {
			err := hub1.Create(ctx, after)
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Eventually(func() error { return hub4.Get(ctx, client.ObjectKeyFromObject(after), &corev1.ConfigMap{}) }).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("member replaced: hub-4 serving %s after its container started; spec took %s\n", joined.Round(100*time.Millisecond), time.Since(started).Round(time.Second))
	})
})
