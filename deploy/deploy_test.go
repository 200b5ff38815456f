package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// doc is one manifest document, decoded into its API type.
type doc struct {
	file string
	obj  any
}

// kinds maps a document's apiVersion and kind to a new object of its API
// type. A kind missing here fails the decoding, so a new kind of
// manifest is added on purpose.
var kinds = map[string]func() any{
	"apps/v1/StatefulSet":                func() any { return &appsv1.StatefulSet{} },
	"v1/Service":                         func() any { return &corev1.Service{} },
	"v1/Secret":                          func() any { return &corev1.Secret{} },
	"v1/ConfigMap":                       func() any { return &corev1.ConfigMap{} },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
	"networking.k8s.io/v1/Ingress":       func() any { return &networkingv1.Ingress{} },
}

// decode decodes one YAML document strictly into the API type its
// apiVersion and kind name: an unknown or duplicated field is an error.
func decode(data []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	mk, ok := kinds[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q, kind %q: not a kind these tests know (add it to kinds)", tm.APIVersion, tm.Kind)
	}
	obj := mk()
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return obj, nil
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// manifests decodes every document of kubernetes/*.yaml and
// gateway/*.yaml.
func manifests(t *testing.T) []doc {
	t.Helper()
	var files []string
	for _, dir := range []string{"kubernetes", "gateway"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			t.Fatalf("%s: no *.yaml manifests", dir)
		}
		files = append(files, m...)
	}
	var docs []doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, part := range docSep.Split(string(data), -1) {
			if strings.TrimSpace(stripComments(part)) == "" {
				continue
			}
			obj, err := decode([]byte(part))
			if err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			docs = append(docs, doc{file: f, obj: obj})
		}
	}
	return docs
}

// stripComments drops the comment lines of a YAML document.
func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// all returns the documents of type T.
func all[T any](docs []doc) []T {
	var out []T
	for _, d := range docs {
		if o, ok := d.obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

func TestDecodeRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	good := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\nspec:\n  replicas: 1\n"
	if _, err := decode([]byte(good)); err != nil {
		t.Fatalf("a valid StatefulSet: %v", err)
	}
	for name, bad := range map[string]string{
		"a misspelt field":   strings.Replace(good, "replicas", "replica", 1),
		"a duplicated field": good + "  replicas: 2\n",
		"an unknown kind":    strings.Replace(good, "StatefulSet", "StatefulSets", 1),
		"a wrong type":       strings.Replace(good, "replicas: 1", "replicas: one", 1),
	} {
		if _, err := decode([]byte(bad)); err == nil {
			t.Errorf("%s was accepted:\n%s", name, bad)
		}
	}
}

func TestManifestsDecodeStrictly(t *testing.T) {
	t.Parallel()
	docs := manifests(t)
	for _, want := range []string{"StatefulSet", "Service", "NetworkPolicy", "Ingress"} {
		found := false
		for _, d := range docs {
			found = found || strings.HasSuffix(fmt.Sprintf("%T", d.obj), "."+want)
		}
		if !found {
			t.Errorf("no %s among the manifests", want)
		}
	}
}

// serveFlags are the flags `agent-mcp serve --help` lists, each with
// whether it takes a value.
func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command(binary, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("agent-mcp serve --help: %v\n%s", err, out)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)( \w+)?$`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = m[2] != ""
	}
	if !flags["http"] && len(flags) < 10 {
		t.Fatalf("could not read the flags from serve --help:\n%s", out)
	}
	return flags
}

// parseArgs reads a serve command line (after "serve") against the flags
// serve knows: --name=value, --name value, or --name for a flag without
// a value. Repeated flags keep every value.
func parseArgs(t *testing.T, known map[string]bool, args []string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			t.Errorf("argument %q: expected a flag", a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, ok := known[name]
		if !ok {
			t.Errorf("argument %q: agent-mcp serve has no flag --%s", a, name)
			continue
		}
		if takes && !hasValue {
			if i+1 == len(args) {
				t.Errorf("argument %q: expected a value after it", a)
				continue
			}
			i++
			value = args[i]
		}
		got[name] = append(got[name], value)
	}
	return got
}

// portOf is the port of a HOST:PORT flag value.
func portOf(t *testing.T, flag, hostport string) int32 {
	t.Helper()
	i := strings.LastIndex(hostport, ":")
	p, err := strconv.Atoi(hostport[i+1:])
	if i < 0 || err != nil {
		t.Fatalf("--%s %q: expected HOST:PORT", flag, hostport)
	}
	return int32(p)
}

// containerPort resolves a probe's or Service's port (a number or a
// container port's name) against c.
func containerPort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return -1
}

func TestWorkspaces(t *testing.T) {
	t.Parallel()
	docs := manifests(t)
	known := serveFlags(t)
	sets := all[*appsv1.StatefulSet](docs)
	if len(sets) < 2 {
		t.Fatalf("%d StatefulSets: want one per workspace, and at least two to show several workspaces", len(sets))
	}
	for _, ss := range sets {
		t.Run(ss.Name, func(t *testing.T) {
			checkWorkspace(t, ss, docs, known)
		})
	}
}

func checkWorkspace(t *testing.T, ss *appsv1.StatefulSet, docs []doc, known map[string]bool) {
	if ss.Spec.Replicas == nil || *ss.Spec.Replicas != 1 {
		t.Errorf("replicas: want exactly 1 (state lives in the pod), got %v", ss.Spec.Replicas)
	}
	pod := ss.Spec.Template
	sel, err := metav1.LabelSelectorAsSelector(ss.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
		t.Fatalf("the selector %v does not select the pod template's labels %v (%v)", ss.Spec.Selector, pod.Labels, err)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args %q: want serve and its flags", c.Args)
	}
	flags := parseArgs(t, known, c.Args[1:])
	one := func(name string) string {
		v := flags[name]
		if len(v) != 1 {
			t.Fatalf("--%s given %d times, want once", name, len(v))
		}
		return v[0]
	}
	if one("http") != "" || one("allow-remote") != "" {
		t.Error("--http and --allow-remote take no value here")
	}

	// Probes on the admin port the arguments open.
	admin := portOf(t, "admin-addr", one("admin-addr"))
	mcpPort := portOf(t, "addr", one("addr"))
	for name, pr := range map[string]struct {
		p    *corev1.Probe
		path string
	}{"livenessProbe": {c.LivenessProbe, "/healthz"}, "readinessProbe": {c.ReadinessProbe, "/readyz"}, "startupProbe": {c.StartupProbe, "/healthz"}} {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("%s: want an httpGet probe of %s", name, pr.path)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path {
			t.Errorf("%s: path %q, want %s", name, pr.p.HTTPGet.Path, pr.path)
		}
		if got := containerPort(c, pr.p.HTTPGet.Port); got != admin {
			t.Errorf("%s: port %v is %d, want the --admin-addr port %d", name, pr.p.HTTPGet.Port.String(), got, admin)
		}
	}

	// The drain fits in the termination grace.
	grace := 10 * time.Second // serve's default
	if v, ok := flags["shutdown-grace"]; ok {
		if grace, err = time.ParseDuration(v[0]); err != nil {
			t.Fatalf("--shutdown-grace %q: %v", v[0], err)
		}
	}
	if tg := pod.Spec.TerminationGracePeriodSeconds; tg == nil || time.Duration(*tg)*time.Second <= grace {
		t.Errorf("terminationGracePeriodSeconds: want more than --shutdown-grace %v, so calls finish before the SIGKILL; got %s", grace, show(tg))
	}

	// The token comes from a Secret, never from the manifest.
	if _, ok := flags["token"]; ok {
		t.Error("--token in the args: take the token from a Secret (env AGENT_MCP_TOKEN)")
	}
	if _, ok := flags["client-token"]; ok {
		t.Error("--client-token in the args: take the tokens from a Secret (env AGENT_MCP_CLIENT_TOKENS)")
	}
	fromSecret := false
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "AGENT_MCP_") && strings.Contains(e.Name, "TOKEN") {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name == "" {
				t.Errorf("env %s: want it from a secretKeyRef, not a literal", e.Name)
			}
			fromSecret = fromSecret || (e.Name == "AGENT_MCP_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil)
		}
	}
	if !fromSecret && len(flags["token-file"]) == 0 {
		t.Error("no token: want env AGENT_MCP_TOKEN from a secretKeyRef")
	}

	// Limits.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("resources.limits.%s: not set", r)
		}
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("resources.requests.%s: not set", r)
		}
	}

	// Security context: non-root, no capabilities, a read-only root with
	// the state directory and /tmp on volumes.
	psc, sc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Error("securityContext: want runAsNonRoot and a non-zero runAsUser on the pod")
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Fatal("container securityContext: want allowPrivilegeEscalation false and every capability dropped (the sandbox needs none)")
	}
	if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount && (pod.Spec.HostUsers == nil || *pod.Spec.HostUsers) {
		t.Error("procMount Unmasked needs a user-namespaced pod (hostUsers: false)")
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	under := func(path string) string {
		for p := path; ; p = filepath.Dir(p) {
			if name, ok := mounts[p]; ok {
				return name
			}
			if p == "/" {
				return ""
			}
		}
	}
	claims := map[string]bool{}
	for _, vc := range ss.Spec.VolumeClaimTemplates {
		claims[vc.Name] = true
	}
	if v := under(one("cwd")); !claims[v] {
		t.Errorf("--cwd %s: want it on a volumeClaimTemplate, is on %q", one("cwd"), v)
	}
	if sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		emptyDirs := map[string]bool{}
		for _, v := range pod.Spec.Volumes {
			if v.EmptyDir != nil {
				emptyDirs[v.Name] = true
			}
		}
		for _, p := range []string{one("state-dir"), "/tmp"} {
			if v := under(p); !emptyDirs[v] && !claims[v] {
				t.Errorf("readOnlyRootFilesystem, and %s is on no writable volume", p)
			}
		}
	}

	// Services: the headless one the StatefulSet names, and one for MCP
	// whose name the server accepts as Host.
	var headless, mcpSvc *corev1.Service
	for _, svc := range all[*corev1.Service](docs) {
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) || len(svc.Spec.Selector) == 0 {
			continue
		}
		if svc.Name == ss.Spec.ServiceName {
			headless = svc
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if containerPort(c, sp.TargetPort) == mcpPort {
				mcpSvc = svc
			}
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("serviceName %q: want a headless Service (clusterIP: None) of that name selecting the pods", ss.Spec.ServiceName)
	}
	if mcpSvc == nil {
		t.Fatalf("no Service selects the pods with a port to the --addr port %d", mcpPort)
	}
	if !slices.Contains(flags["allow-host"], mcpSvc.Name) {
		t.Errorf("--allow-host: want the Service's name %q among %q, or requests through it get 403", mcpSvc.Name, flags["allow-host"])
	}

	// A NetworkPolicy selects the pods, limits both directions, and lets
	// the MCP and admin ports in.
	covered := false
	for _, np := range all[*networkingv1.NetworkPolicy](docs) {
		npSel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !npSel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		covered = true
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			t.Errorf("NetworkPolicy %s: policyTypes %v, want Ingress and Egress", np.Name, np.Spec.PolicyTypes)
		}
		open := map[int32]bool{}
		for _, r := range np.Spec.Ingress {
			for _, p := range r.Ports {
				if p.Port != nil {
					open[containerPort(c, *p.Port)] = true
				}
			}
		}
		if !open[mcpPort] || !open[admin] {
			t.Errorf("NetworkPolicy %s: ingress ports %v, want the MCP port %d and the admin port %d", np.Name, open, mcpPort, admin)
		}
		for _, r := range np.Spec.Egress {
			if len(r.Ports) == 0 {
				t.Errorf("NetworkPolicy %s: an egress rule without ports lets everything out", np.Name)
			}
		}
	}
	if !covered {
		t.Error("no NetworkPolicy selects the pods")
	}
}

// show prints an optional number: its value, or "unset".
func show(p *int64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatInt(*p, 10) + "s"
}

// TestGateway checks the gateway example: each path /ws/<name>/mcp goes
// to the MCP Service of a workspace, rewritten to /mcp, with a Host that
// workspace accepts.
func TestGateway(t *testing.T) {
	t.Parallel()
	docs := manifests(t)
	known := serveFlags(t)
	services := map[string]*corev1.Service{}
	for _, svc := range all[*corev1.Service](docs) {
		services[svc.Name] = svc
	}
	allowHosts := map[string][]string{} // workspace label → --allow-host
	for _, ss := range all[*appsv1.StatefulSet](docs) {
		flags := parseArgs(t, known, ss.Spec.Template.Spec.Containers[0].Args[1:])
		allowHosts[ss.Spec.Template.Labels["agent-mcp/workspace"]] = flags["allow-host"]
	}
	ingresses := all[*networkingv1.Ingress](docs)
	if len(ingresses) < 2 {
		t.Fatalf("%d Ingresses: want one per workspace, at least two", len(ingresses))
	}
	for _, ing := range ingresses {
		if got := ing.Annotations["nginx.ingress.kubernetes.io/rewrite-target"]; got != "/mcp" {
			t.Errorf("Ingress %s: rewrite-target %q, want /mcp (agent-mcp serves MCP there)", ing.Name, got)
		}
		if got := ing.Annotations["nginx.ingress.kubernetes.io/proxy-buffering"]; got != "off" {
			t.Errorf("Ingress %s: proxy-buffering %q, want off (answers and progress come as an event stream)", ing.Name, got)
		}
		for _, rule := range ing.Spec.Rules {
			for _, p := range rule.HTTP.Paths {
				svc := services[p.Backend.Service.Name]
				if svc == nil {
					t.Errorf("Ingress %s: path %s goes to Service %q, which no manifest defines", ing.Name, p.Path, p.Backend.Service.Name)
					continue
				}
				ws := svc.Spec.Selector["agent-mcp/workspace"]
				if want := "/ws/" + ws + "/mcp"; p.Path != want {
					t.Errorf("Ingress %s: path %s goes to workspace %q, want the path %s", ing.Name, p.Path, ws, want)
				}
				if vhost := ing.Annotations["nginx.ingress.kubernetes.io/upstream-vhost"]; !slices.Contains(allowHosts[ws], vhost) {
					t.Errorf("Ingress %s: upstream-vhost %q is not among workspace %q's --allow-host %q", ing.Name, vhost, ws, allowHosts[ws])
				}
			}
		}
	}
}

// instruction is one instruction of the Containerfile, its continuation
// lines joined.
type instruction struct {
	op, args string
}

func readContainerfile(t *testing.T) []instruction {
	t.Helper()
	data, err := os.ReadFile("../Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(strings.TrimSpace(line), "#") || (cur.Len() == 0 && strings.TrimSpace(line) == "") {
			continue
		}
		cont := strings.HasSuffix(line, "\\")
		cur.WriteString(strings.TrimSuffix(line, "\\"))
		if cont {
			cur.WriteString(" ")
			continue
		}
		op, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{op: strings.ToUpper(op), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// stages splits the instructions at each FROM.
func stages(ins []instruction) [][]instruction {
	var out [][]instruction
	for _, in := range ins {
		if in.op == "FROM" {
			out = append(out, nil)
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], in)
		}
	}
	return out
}

func TestContainerfile(t *testing.T) {
	t.Parallel()
	st := stages(readContainerfile(t))
	if len(st) != 2 {
		t.Fatalf("%d stages: want a build stage and the image", len(st))
	}
	build, image := st[0], st[1]
	if !regexp.MustCompile(`^\S*debian:(bookworm|trixie)-slim$`).MatchString(image[0].args) {
		t.Errorf("the image is FROM %q: want Debian slim (bookworm-slim or trixie-slim)", image[0].args)
	}
	byOp := map[string][]string{}
	for _, in := range image {
		byOp[in.op] = append(byOp[in.op], in.args)
	}
	if len(byOp["HEALTHCHECK"]) > 0 {
		t.Error("HEALTHCHECK: Kubernetes probes the health endpoints; the image has none")
	}
	if u := byOp["USER"]; len(u) != 1 || strings.HasPrefix(u[0], "0") || strings.HasPrefix(u[0], "root") {
		t.Errorf("USER %q: want one non-root user", u)
	}
	if v := byOp["VOLUME"]; len(v) != 1 || !strings.Contains(v[0], `"/workspace"`) {
		t.Errorf("VOLUME %q: want /workspace", v)
	}
	if e := byOp["ENTRYPOINT"]; len(e) != 1 || e[0] != `["agent-mcp"]` {
		t.Errorf("ENTRYPOINT %q: want [\"agent-mcp\"]", e)
	}
	var cmd []string
	if c := byOp["CMD"]; len(c) != 1 || yaml.Unmarshal([]byte(c[0]), &cmd) != nil || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("CMD %q: want a JSON list starting with serve", byOp["CMD"])
	}
	flags := parseArgs(t, serveFlags(t), cmd[1:])
	for _, f := range []string{"http", "addr", "admin-addr", "allow-remote", "cwd"} {
		if _, ok := flags[f]; !ok {
			t.Errorf("CMD: want --%s", f)
		}
	}

	// The packages the image installs.
	var pkgs []string
	for _, run := range byOp["RUN"] {
		for _, part := range strings.Split(run, "&&") {
			f := strings.Fields(part)
			i := slices.Index(f, "install")
			if i < 0 || !slices.Contains(f[:i], "apt-get") {
				continue
			}
			for _, a := range f[i+1:] {
				if !strings.HasPrefix(a, "-") {
					pkgs = append(pkgs, a)
				}
			}
		}
	}
	for _, want := range []string{"bash", "git", "coreutils", "ca-certificates"} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("apt-get install %q: want %s", pkgs, want)
		}
	}
	t.Run("packages exist", func(t *testing.T) {
		aptCache, err := exec.LookPath("apt-cache")
		if err != nil {
			t.Skip("no apt-cache here: the packages are not looked up")
		}
		out, err := exec.Command(aptCache, append([]string{"show", "--no-all-versions"}, pkgs...)...).CombinedOutput()
		for _, p := range pkgs {
			if !bytes.Contains(out, []byte("Package: "+p+"\n")) {
				t.Errorf("apt-cache show %s: no such package (%v)\n%s", p, err, out)
			}
		}
	})

	// The build stage's go build, dry-run here: its flags are valid, the
	// package builds, and CGO_ENABLED=0 links no C.
	t.Run("go build", func(t *testing.T) {
		args := map[string]string{}
		var line string
		for _, in := range build {
			if in.op == "ARG" {
				k, v, _ := strings.Cut(in.args, "=")
				args[k] = v
			}
			if in.op == "RUN" && strings.Contains(in.args, "go build") {
				line = in.args
			}
		}
		if line == "" {
			t.Fatal("the build stage has no RUN with go build")
		}
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-s -w"} {
			if !strings.Contains(line, want) {
				t.Errorf("%q: want %s", line, want)
			}
		}
		words := shellWords(t, line, args)
		var env []string
		for len(words) > 0 && strings.Contains(words[0], "=") {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) < 2 || words[0] != "go" || words[1] != "build" {
			t.Fatalf("%q: want [VAR=value ...] go build ...", line)
		}
		for i, w := range words {
			if w == "-o" && i+1 < len(words) {
				words[i+1] = filepath.Join(t.TempDir(), "agent-mcp")
			}
		}
		cmd := exec.Command("go", append([]string{"build", "-n"}, words[2:]...)...)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build -n %q: %v\n%s", words[2:], err, screenful(out))
		}
		if cgo := linksC(out); len(cgo) > 0 {
			t.Errorf("%s go build: the build links C, want a static binary; the plan (go build -n) says:\n%s", strings.Join(env, " "), strings.Join(cgo, "\n"))
		}
	})
}

// linksC returns the lines of a `go build -n` plan that show C linked in:
// an import configuration naming the runtime/cgo package (whose absence
// is what CGO_ENABLED=0 guarantees), or a link step asking for the
// external linker. The plan is thousands of lines where the build cache
// is cold, and names the source file runtime/cgo.go of package runtime,
// so it is read line by line, not searched for a substring. At most five
// lines are returned, then a count of the rest.
func linksC(plan []byte) []string {
	var found []string
	n := 0
	for line := range strings.Lines(string(plan)) {
		line = strings.TrimRight(line, "\n")
		linker := strings.Contains(line, "/link ") || strings.HasPrefix(line, "link ")
		if strings.HasPrefix(line, "packagefile runtime/cgo=") || (linker && strings.Contains(line, "-linkmode=external")) {
			if n++; n <= 5 {
				found = append(found, line)
			}
		}
	}
	if n > 5 {
		found = append(found, fmt.Sprintf("(and %d more such lines)", n-5))
	}
	return found
}

// screenful is at most the first and last ten lines of a command's
// output, with a count of what was left out between them.
func screenful(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) <= 20 {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:10], "\n") + fmt.Sprintf("\n... (%d lines left out)\n", len(lines)-20) + strings.Join(lines[len(lines)-10:], "\n")
}

// shellWords splits a RUN line the way the shell would for the simple
// quoting the Containerfile uses (double quotes, ${VAR} from args).
func shellWords(t *testing.T, line string, args map[string]string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '"':
			quoted, inWord = !quoted, true
		case ch == '$' && i+1 < len(line) && line[i+1] == '{':
			end := strings.IndexByte(line[i:], '}')
			if end < 0 {
				t.Fatalf("%q: an unclosed ${", line)
			}
			name := line[i+2 : i+end]
			v, ok := args[name]
			if !ok {
				t.Fatalf("%q: ${%s} is no ARG of the build stage", line, name)
			}
			cur.WriteString(v)
			inWord, i = true, i+end
		case (ch == ' ' || ch == '\t') && !quoted:
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case ch == '\'' || ch == '\\' || ch == '&' || ch == ';' || ch == '|':
			if !quoted || ch != '\'' {
				t.Fatalf("%q: %q is more shell than this test reads", line, ch)
			}
			cur.WriteByte(ch)
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("%q: an unclosed quote", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestWorkspaceArgsServe starts agent-mcp with a workspace's own args (its
// addresses on loopback ports of the test's, its directories temporary,
// the sandbox as the machine allows), probes it as the kubelet would, and
// reads /metrics: every agent_mcp_* series it serves is listed in
// docs/deploy.md, and every series the page lists is one the source makes.
func TestWorkspaceArgsServe(t *testing.T) {
	t.Parallel()
	docs := manifests(t)
	known := serveFlags(t)
	sets := all[*appsv1.StatefulSet](docs)
	args := []string{"serve"}
	flags := parseArgs(t, known, sets[0].Spec.Template.Spec.Containers[0].Args[1:])
	replace := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "cwd": t.TempDir(), "state-dir": t.TempDir(), "sandbox": "auto"}
	for name, values := range flags {
		for _, v := range values {
			if r, ok := replace[name]; ok {
				v = r
			}
			if known[name] {
				args = append(args, "--"+name+"="+v)
			} else {
				args = append(args, "--"+name)
			}
		}
	}
	const token = "deploy-test-token"
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testbin.HermeticEnv(t), "AGENT_MCP_TOKEN="+token)
	urls := testbin.StartServer(t, cmd, "agent-mcp serving MCP at ", "Probes and metrics at ")
	mcpURL := urls[0]
	adminURL, _, _ := strings.Cut(urls[1], " ")
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(adminURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(p); code != http.StatusOK {
			t.Errorf("GET %s on the admin port: %d %s", p, code, body)
		}
	}
	cs := testbin.HTTP(t, mcpURL, token, nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Glob", Arguments: map[string]any{"pattern": "*"}}); err != nil {
		t.Fatalf("a Glob call: %v", err)
	}
	code, body := get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics on a loopback admin port: %d %s", code, body)
	}
	page, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	served := regexp.MustCompile(`(?m)^# TYPE (agent_mcp_\w+) `).FindAllStringSubmatch(body, -1)
	if len(served) < 5 {
		t.Fatalf("/metrics serves %d agent_mcp_* series:\n%s", len(served), body)
	}
	for _, m := range served {
		if !bytes.Contains(page, []byte("`"+m[1])) {
			t.Errorf("/metrics serves %s, which docs/deploy.md does not list", m[1])
		}
	}
	var source []byte
	for _, glob := range []string{"../server/*.go", "../internal/cli/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				source = append(source, b...)
			}
		}
	}
	for _, m := range regexp.MustCompile("`(agent_mcp_[a-z_]+)").FindAllSubmatch(page, -1) {
		if name := strings.TrimPrefix(string(m[1]), "agent_mcp_"); !bytes.Contains(source, []byte(`"`+name+`"`)) {
			t.Errorf("docs/deploy.md lists %s, which neither server nor internal/cli registers", m[1])
		}
	}
}
