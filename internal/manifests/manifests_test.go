package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
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
	"k8s.io/apimachinery/pkg/util/validation"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/leyworks/ley/area/agones"
	"github.com/leyworks/ley/internal/containerimage"
	"github.com/leyworks/ley/internal/realmtest"
)

// manifestDir is where the manifests live, relative to this package.
var manifestDir = filepath.Join("..", "..", "docs", "deploy", "kubernetes")

// guide is the operator's guide that creates the Secrets.
var guide = filepath.Join("..", "..", "docs", "kubernetes.md")

// object is one decoded manifest document.
type object struct {
	where string // file:document, for messages
	kind  string // "apiVersion kind"
	v     any    // pointer to the typed object
}

// decodeDoc decodes one YAML document as the API server would: YAML to
// JSON (duplicate keys are errors), then case-sensitive JSON with no
// unknown or duplicate fields into the type its apiVersion and kind name.
// A document of comments only is nil, nil.
func decodeDoc(doc []byte) (any, string, error) {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, "", err
	}
	if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return nil, "", nil
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, "", err
	}
	kind := tm.APIVersion + " " + tm.Kind
	var v interface{ GetNamespace() string }
	switch kind {
	case "v1 Namespace":
		v = &corev1.Namespace{}
	case "v1 Secret":
		v = &corev1.Secret{}
	case "v1 ConfigMap":
		v = &corev1.ConfigMap{}
	case "v1 Service":
		v = &corev1.Service{}
	case "apps/v1 Deployment":
		v = &appsv1.Deployment{}
	case "networking.k8s.io/v1 NetworkPolicy":
		v = &networkingv1.NetworkPolicy{}
	case "networking.k8s.io/v1 Ingress":
		v = &networkingv1.Ingress{}
	case "agones.dev/v1 Fleet":
		v = &fleet{}
	case "autoscaling.agones.dev/v1 FleetAutoscaler":
		v = &fleetAutoscaler{}
	default:
		return nil, kind, fmt.Errorf("kind %q: not one this test knows; add its type", kind)
	}
	strict, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		return nil, kind, err
	}
	if err := errors.Join(strict...); err != nil {
		return nil, kind, err
	}
	switch o := v.(type) {
	case *fleet:
		err = o.validate()
	case *fleetAutoscaler:
		err = o.validate()
	}
	return v, kind, err
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// load decodes every document of every YAML file under manifestDir.
func load(t *testing.T) []object {
	t.Helper()
	var objs []object
	err := filepath.WalkDir(manifestDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			t.Errorf("%s: not a .yaml file in the manifests folder", path)
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(manifestDir, path)
		for i, doc := range docSep.Split(string(b), -1) {
			where := fmt.Sprintf("%s:%d", rel, i)
			v, kind, err := decodeDoc([]byte(doc))
			if err != nil {
				t.Errorf("%s (%s): %v", where, kind, err)
				continue
			}
			if v != nil {
				objs = append(objs, object{where: where, kind: kind, v: v})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("no manifests under %s", manifestDir)
	}
	return objs
}

// all returns the objects of type T.
func all[T any](objs []object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.v.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// one returns the only object of type T named name, failing the test
// otherwise.
func one[T interface{ GetName() string }](t *testing.T, objs []object, name string) T {
	t.Helper()
	var found []T
	for _, v := range all[T](objs) {
		if v.GetName() == name {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d %T named %q; want 1", len(found), zero, name)
	}
	return found[0]
}

// TestDecodeIsStrict: the decoder refuses what the API server refuses, so
// that TestManifests cannot pass on a misspelt field.
func TestDecodeIsStrict(t *testing.T) {
	bad := map[string]string{
		"unknown field":       "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80}], sesionAffinity: None}\n",
		"wrong case":          "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {Ports: [{port: 80}]}\n",
		"duplicate key":       "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {type: ClusterIP, type: NodePort}\n",
		"wrong type":          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: one}\n",
		"unknown kind":        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
		"fleet unknown field": "apiVersion: agones.dev/v1\nkind: Fleet\nmetadata: {name: x}\nspec: {template: {spec: {healthCheck: {}, ports: [{containerPort: 1}], template: {spec: {containers: [{name: a, image: b}]}}}}}\n",
		"fleet bad policy":    "apiVersion: agones.dev/v1\nkind: Fleet\nmetadata: {name: x}\nspec: {template: {spec: {ports: [{portPolicy: Random, containerPort: 1}], template: {spec: {containers: [{name: a, image: b}]}}}}}\n",
		"fleet no image":      "apiVersion: agones.dev/v1\nkind: Fleet\nmetadata: {name: x}\nspec: {template: {spec: {ports: [{containerPort: 1}], template: {spec: {containers: [{name: a}]}}}}}\n",
		"autoscaler min>max":  "apiVersion: autoscaling.agones.dev/v1\nkind: FleetAutoscaler\nmetadata: {name: x}\nspec: {fleetName: f, policy: {type: Buffer, buffer: {bufferSize: 2, minReplicas: 5, maxReplicas: 3}}}\n",
		"autoscaler min<buf":  "apiVersion: autoscaling.agones.dev/v1\nkind: FleetAutoscaler\nmetadata: {name: x}\nspec: {fleetName: f, policy: {type: Buffer, buffer: {bufferSize: 4, minReplicas: 2, maxReplicas: 9}}}\n",
		"autoscaler 100%":     "apiVersion: autoscaling.agones.dev/v1\nkind: FleetAutoscaler\nmetadata: {name: x}\nspec: {fleetName: f, policy: {type: Buffer, buffer: {bufferSize: 100%, minReplicas: 2, maxReplicas: 9}}}\n",
		"autoscaler sync":     "apiVersion: autoscaling.agones.dev/v1\nkind: FleetAutoscaler\nmetadata: {name: x}\nspec: {fleetName: f, policy: {type: Buffer, buffer: {bufferSize: 1, maxReplicas: 9}}, sync: {type: Cron}}\n",
	}
	for name, doc := range bad {
		if _, _, err := decodeDoc([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
	good := "apiVersion: autoscaling.agones.dev/v1\nkind: FleetAutoscaler\nmetadata: {name: x}\nspec: {fleetName: f, policy: {type: Buffer, buffer: {bufferSize: 20%, minReplicas: 1, maxReplicas: 9}}}\n"
	if _, _, err := decodeDoc([]byte(good)); err != nil {
		t.Errorf("a valid FleetAutoscaler: %v", err)
	}
}

// containerRef is a ley container in a Deployment or the Fleet.
type containerRef struct {
	where string
	pod   *corev1.PodSpec
	c     *corev1.Container
}

func leyContainers(objs []object) []containerRef {
	var out []containerRef
	for _, d := range all[*appsv1.Deployment](objs) {
		for i := range d.Spec.Template.Spec.Containers {
			out = append(out, containerRef{"Deployment " + d.Name, &d.Spec.Template.Spec, &d.Spec.Template.Spec.Containers[i]})
		}
	}
	for _, f := range all[*fleet](objs) {
		pod := &f.Spec.Template.Spec.Template.Spec
		for i := range pod.Containers {
			out = append(out, containerRef{"Fleet " + f.Name, pod, &pod.Containers[i]})
		}
	}
	return out
}

// TestManifests decodes every manifest strictly and checks that they fit
// together: names, namespace, image, selectors, ports, probes, security,
// Secrets.
func TestManifests(t *testing.T) {
	objs := load(t)

	// Names and labels are valid, and every object is in the one namespace.
	nss := all[*corev1.Namespace](objs)
	if len(nss) != 1 {
		t.Fatalf("%d Namespaces; want 1", len(nss))
	}
	ns := nss[0].Name
	for _, o := range objs {
		m := o.v.(interface {
			GetName() string
			GetNamespace() string
			GetLabels() map[string]string
		})
		if errs := validation.IsDNS1123Subdomain(m.GetName()); len(errs) > 0 {
			t.Errorf("%s: name %q: %v", o.where, m.GetName(), errs)
		}
		for k, v := range m.GetLabels() {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				t.Errorf("%s: label %s=%s: %v", o.where, k, v, errs)
			}
		}
		if o.kind != "v1 Namespace" && m.GetNamespace() != ns {
			t.Errorf("%s: namespace %q; want %q", o.where, m.GetNamespace(), ns)
		}
	}

	director := one[*appsv1.Deployment](t, objs, "ley-director")
	svc := one[*corev1.Service](t, objs, "ley-director")
	flt := one[*fleet](t, objs, "ley-areahosts")
	fas := all[*fleetAutoscaler](objs)

	// One image everywhere, run by its entrypoint.
	var images []string
	for _, r := range leyContainers(objs) {
		images = append(images, r.c.Image)
		if len(r.c.Command) != 0 {
			t.Errorf("%s: container %s sets command %q; the image's entrypoint is the ley binary", r.where, r.c.Name, r.c.Command)
		}
	}
	if slices.Sort(images); len(slices.Compact(images)) != 1 {
		t.Errorf("images %q; want one image for the director and the hosts", images)
	}

	// The Deployment selects its own Pods; the Service selects them and
	// targets their ports; probes hit /healthz and /readyz on a named port.
	sel, err := metav1.LabelSelectorAsSelector(director.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(director.Spec.Template.Labels)) {
		t.Errorf("Deployment selector %v does not select its Pod template's labels %v", director.Spec.Selector, director.Spec.Template.Labels)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(director.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service selector %v does not select the director's Pods %v", svc.Spec.Selector, director.Spec.Template.Labels)
	}
	dc := director.Spec.Template.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range dc.Ports {
		ports[p.Name] = p.ContainerPort
	}
	svcPort := map[string]int32{} // Service port name -> container port it reaches
	for _, p := range svc.Spec.Ports {
		cp, ok := containerPort(p.TargetPort, ports)
		if !ok {
			t.Errorf("Service port %s targets %s, which the director's container does not expose", p.Name, p.TargetPort.String())
		}
		svcPort[p.Name] = cp
		if p.Port != cp {
			t.Errorf("Service port %s is %d but reaches %d; keep them equal so the docs' one number holds", p.Name, p.Port, cp)
		}
	}
	for _, name := range []string{"http", "control"} {
		if _, ok := svcPort[name]; !ok {
			t.Errorf("the Service has no %s port", name)
		}
	}
	probes := map[string]*corev1.Probe{"liveness": dc.LivenessProbe, "readiness": dc.ReadinessProbe, "startup": dc.StartupProbe}
	wantPath := map[string]string{"liveness": "/healthz", "readiness": "/readyz", "startup": "/healthz"}
	for k, p := range probes {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("director: no HTTP %s probe", k)
			continue
		}
		if p.HTTPGet.Path != wantPath[k] {
			t.Errorf("director %s probe path %q; want %q", k, p.HTTPGet.Path, wantPath[k])
		}
		if cp, ok := containerPort(p.HTTPGet.Port, ports); !ok || cp != ports["http"] {
			t.Errorf("director %s probe port %s; want the http port", k, p.HTTPGet.Port.String())
		}
	}

	// Area hosts: the Fleet's client port is what --listen binds, and
	// --director names the Service's control port.
	gs := &flt.Spec.Template.Spec
	hc := gs.Template.Spec.Containers[0]
	if gs.Container != "" {
		for _, c := range gs.Template.Spec.Containers {
			if c.Name == gs.Container {
				hc = c
			}
		}
	}
	if len(hc.Args) == 0 || hc.Args[0] != "areahost" {
		t.Errorf("Fleet container args %q; want `areahost ...`", hc.Args)
	}
	if len(gs.Ports) != 1 || gs.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("Fleet ports %+v; want one TCP port (WebSocket)", gs.Ports)
	} else if _, p := argHostPort(t, "Fleet", hc.Args, "--listen"); p != gs.Ports[0].ContainerPort {
		t.Errorf("Fleet: --listen port %d, containerPort %d; want equal", p, gs.Ports[0].ContainerPort)
	}
	if !slices.Contains(hc.Args, "--agones") {
		t.Errorf("Fleet container args %q: without --agones the host never tells Agones it is Ready", hc.Args)
	}
	host, port := argHostPort(t, "Fleet", hc.Args, "--director")
	if host != svc.Name && !strings.HasPrefix(host, svc.Name+"."+ns+".") && host != svc.Name+"."+ns {
		t.Errorf("Fleet: --director host %q; want the Service %s (in %s)", host, svc.Name, ns)
	}
	if port != portByName(svc, "control") {
		t.Errorf("Fleet: --director port %d; want the Service's control port %d", port, portByName(svc, "control"))
	}
	if _, p := argHostPort(t, "director", dc.Args, "--control"); p != ports["control"] {
		t.Errorf("director: --control port %d; container port control %d", p, ports["control"])
	}
	if _, p := argHostPort(t, "director", dc.Args, "--http"); p != ports["http"] {
		t.Errorf("director: --http port %d; container port http %d", p, ports["http"])
	}

	// Agones health: the host pings at least twice per period.
	h := gs.Health
	if h == nil || h.Disabled || h.PeriodSeconds == 0 {
		t.Errorf("Fleet health %+v; want health checking on, with a period", h)
	} else if period := time.Duration(h.PeriodSeconds) * time.Second; period < 2*agones.DefaultConfig().HealthEvery {
		t.Errorf("Fleet health period %v; the host pings every %v, want at least two pings per period", period, agones.DefaultConfig().HealthEvery)
	}

	// The autoscaler scales this Fleet.
	if len(fas) != 1 || fas[0].Spec.FleetName != flt.Name || fas[0].Spec.Policy.Type != "Buffer" {
		var got []string
		for _, a := range fas {
			got = append(got, a.Spec.Policy.Type+" for "+a.Spec.FleetName)
		}
		t.Errorf("FleetAutoscalers %q; want one Buffer autoscaler for Fleet %s", got, flt.Name)
	}

	// The NetworkPolicy guards the director: the control port only from
	// area host Pods, the HTTP port from anywhere.
	for _, np := range all[*networkingv1.NetworkPolicy](objs) {
		npSel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !npSel.Matches(labels.Set(director.Spec.Template.Labels)) {
			t.Errorf("NetworkPolicy %s does not select the director", np.Name)
		}
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				cp, ok := containerPort(*p.Port, ports)
				if !ok {
					t.Errorf("NetworkPolicy %s: port %s is not the director's", np.Name, p.Port.String())
				}
				if cp == ports["control"] {
					if len(rule.From) == 0 {
						t.Errorf("NetworkPolicy %s opens the control port to everyone", np.Name)
					}
					for _, from := range rule.From {
						s, err := metav1.LabelSelectorAsSelector(from.PodSelector)
						if err != nil || from.PodSelector == nil || !s.Matches(labels.Set(gs.Template.Labels)) {
							t.Errorf("NetworkPolicy %s: control port peer %+v does not admit the area host Pods %v", np.Name, from, gs.Template.Labels)
						}
					}
				}
			}
		}
	}
	// An Ingress, if any, routes to the Service's HTTP port only.
	for _, ing := range all[*networkingv1.Ingress](objs) {
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				b := p.Backend.Service
				if b == nil || b.Name != svc.Name || (b.Port.Name != "http" && b.Port.Number != portByName(svc, "http")) {
					t.Errorf("Ingress %s path %s: backend %+v; want the Service's http port", ing.Name, p.Path, b)
				}
			}
		}
	}

	// Every ley container runs as the image's non-root user on a read-only
	// root file system, with nothing to escalate to.
	for _, r := range leyContainers(objs) {
		sc := r.c.SecurityContext
		if sc == nil {
			t.Errorf("%s: container %s has no securityContext", r.where, r.c.Name)
			continue
		}
		uid := sc.RunAsUser
		if uid == nil && r.pod.SecurityContext != nil {
			uid = r.pod.SecurityContext.RunAsUser
		}
		if uid == nil || *uid != containerimage.UID || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: container %s: runAsUser %v, runAsNonRoot %v; want %d, true", r.where, r.c.Name, uid, sc.RunAsNonRoot, containerimage.UID)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("%s: container %s: want readOnlyRootFilesystem, no privilege escalation, capabilities drop ALL", r.where, r.c.Name)
		}
	}

	// Secrets: read from env only, each reference names a key the example
	// Secrets define and the guide creates.
	secrets := map[string]map[string]bool{}
	for _, s := range all[*corev1.Secret](objs) {
		secrets[s.Name] = map[string]bool{}
		for k := range s.StringData {
			secrets[s.Name][k] = true
		}
		for k := range s.Data {
			secrets[s.Name][k] = true
		}
	}
	guideText, err := os.ReadFile(guide)
	if err != nil {
		t.Fatalf("the operator's guide: %v", err)
	}
	refs := 0
	for _, r := range leyContainers(objs) {
		for _, a := range r.c.Args {
			if flag, _, _ := strings.Cut(a, "="); flag == "--host-key" || flag == "--database-url" {
				t.Errorf("%s: %s on the command line: secrets go in the environment from a Secret", r.where, flag)
			}
		}
		for _, e := range r.c.Env {
			if (e.Name == "LEY_HOST_KEY" || e.Name == "LEY_DATABASE_URL") && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
				t.Errorf("%s: %s not from a Secret", r.where, e.Name)
			}
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			refs++
			if !secrets[ref.Name][ref.Key] {
				t.Errorf("%s: %s reads Secret %s key %s, which no manifest defines", r.where, e.Name, ref.Name, ref.Key)
			}
			create := regexp.MustCompile(`kubectl( -n \S+)? create secret generic ` + regexp.QuoteMeta(ref.Name) + `\b[^\n]*(\\\n[^\n]*)*--from-(literal|file)=` + regexp.QuoteMeta(ref.Key) + `=`)
			if !create.Match(guideText) {
				t.Errorf("%s: docs/kubernetes.md does not create Secret %s with key %s", r.where, ref.Name, ref.Key)
			}
		}
	}
	if refs < 3 {
		t.Errorf("%d Secret references; want the director's two and the hosts' host key", refs)
	}
}

// containerPort resolves a target port (a name or a number) against a
// container's named ports.
func containerPort(p intstr.IntOrString, ports map[string]int32) (int32, bool) {
	if p.Type == intstr.String {
		n, ok := ports[p.StrVal]
		return n, ok
	}
	for _, n := range ports {
		if n == p.IntVal {
			return n, true
		}
	}
	return 0, false
}

func portByName(svc *corev1.Service, name string) int32 {
	for _, p := range svc.Spec.Ports {
		if p.Name == name {
			return p.Port
		}
	}
	return -1
}

// argHostPort returns the host and port of flag's value in args (given
// as "--flag value" or "--flag=value").
func argHostPort(t *testing.T, where string, args []string, flag string) (string, int32) {
	t.Helper()
	v, ok := argValue(args, flag)
	if !ok {
		t.Errorf("%s: no %s in %q", where, flag, args)
		return "", -1
	}
	h, p, err := net.SplitHostPort(v)
	n, err2 := strconv.ParseUint(p, 10, 16)
	if err != nil || err2 != nil {
		t.Errorf("%s: %s %q: want host:port", where, flag, v)
		return "", -1
	}
	return h, int32(n)
}

func argValue(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

func TestMain(m *testing.M) { os.Exit(realmtest.Main(m)) }

var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9][a-z0-9-]*)`)

// helpFlags returns the flags `ley <sub> --help` lists.
func helpFlags(t *testing.T, bin, sub string) map[string]bool {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), bin, sub, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("ley %s --help: %v\n%s", sub, err, out)
	}
	flags := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) < 3 {
		t.Fatalf("ley %s --help lists %d flags:\n%s", sub, len(flags), out)
	}
	return flags
}

// TestManifestsMatchTheBinary: every flag a container passes and every
// LEY_* variable it sets is one `ley <subcommand> --help` lists.
func TestManifestsMatchTheBinary(t *testing.T) {
	objs := load(t)
	bin := realmtest.Binary(t)
	known := map[string]map[string]bool{}
	for _, r := range leyContainers(objs) {
		if len(r.c.Args) == 0 || strings.HasPrefix(r.c.Args[0], "-") {
			t.Errorf("%s: args %q; want a subcommand first", r.where, r.c.Args)
			continue
		}
		sub := r.c.Args[0]
		if known[sub] == nil {
			known[sub] = helpFlags(t, bin, sub)
		}
		for _, a := range r.c.Args[1:] {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !known[sub][name] {
				t.Errorf("%s: ley %s has no flag --%s (see ley %s --help)", r.where, sub, name, sub)
			}
		}
		for _, e := range r.c.Env {
			rest, ok := strings.CutPrefix(e.Name, "LEY_")
			if !ok {
				continue
			}
			flag := strings.ToLower(strings.ReplaceAll(rest, "_", "-"))
			if !known[sub][flag] {
				t.Errorf("%s: %s stands for --%s, which ley %s does not have", r.where, e.Name, flag, sub)
			}
		}
	}
	for _, sub := range []string{"director", "areahost"} {
		if known[sub] == nil {
			t.Errorf("no container runs ley %s", sub)
		}
	}
}
