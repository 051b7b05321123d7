package manifests

// The Agones kinds, mirrored from the Agones CRD schemas
// (install/helm/agones/templates/crds: fleet.yaml, _gameserverspecschema.yaml,
// fleetautoscaler.yaml, _fleetautoscalerpolicy.yaml) and Go types
// (pkg/apis/agones/v1, pkg/apis/autoscaling/v1) as the Agones reference
// documents them; the Agones Go module is not available here. Field names
// and JSON tags are the CRDs'; validate applies the CRDs' enums and ranges
// and the rules of Agones' validating webhook (Fleet.Validate,
// ValidateBufferPolicy, ValidateFixedIntervalSync). Only the parts of the
// schema ley's manifests may use are mirrored: an unmirrored field fails
// the strict decode, which is the point.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	admregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// fleet is agones.dev/v1 Fleet.
type fleet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              fleetSpec `json:"spec"`
}

type fleetSpec struct {
	Replicas           *int32                     `json:"replicas,omitempty"`
	AllocationOverflow *allocationOverflow        `json:"allocationOverflow,omitempty"`
	Strategy           *appsv1.DeploymentStrategy `json:"strategy,omitempty"`
	Scheduling         string                     `json:"scheduling,omitempty"`
	Priorities         []priority                 `json:"priorities,omitempty"`
	Template           gameServerTemplateSpec     `json:"template"`
}

type allocationOverflow struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type priority struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Order string `json:"order,omitempty"`
}

type gameServerTemplateSpec struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              gameServerSpec `json:"spec"`
}

type gameServerSpec struct {
	Container string                 `json:"container,omitempty"`
	Ports     []gameServerPort       `json:"ports,omitempty"`
	Health    *gsHealth              `json:"health,omitempty"`
	SdkServer *sdkServer             `json:"sdkServer,omitempty"`
	Players   *playersSpec           `json:"players,omitempty"`
	Eviction  *eviction              `json:"eviction,omitempty"`
	Template  corev1.PodTemplateSpec `json:"template"`
}

type gameServerPort struct {
	Name          string          `json:"name,omitempty"`
	Range         string          `json:"range,omitempty"`
	PortPolicy    string          `json:"portPolicy,omitempty"`
	Container     *string         `json:"container,omitempty"`
	ContainerPort int32           `json:"containerPort,omitempty"`
	HostPort      int32           `json:"hostPort,omitempty"`
	Protocol      corev1.Protocol `json:"protocol,omitempty"`
}

type gsHealth struct {
	Disabled            bool  `json:"disabled,omitempty"`
	PeriodSeconds       int32 `json:"periodSeconds,omitempty"`
	FailureThreshold    int32 `json:"failureThreshold,omitempty"`
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
}

type sdkServer struct {
	LogLevel string `json:"logLevel,omitempty"`
	GRPCPort int32  `json:"grpcPort,omitempty"`
	HTTPPort int32  `json:"httpPort,omitempty"`
}

type playersSpec struct {
	InitialCapacity int64 `json:"initialCapacity,omitempty"`
}

type eviction struct {
	Safe string `json:"safe,omitempty"`
}

// fleetAutoscaler is autoscaling.agones.dev/v1 FleetAutoscaler.
type fleetAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              fleetAutoscalerSpec `json:"spec"`
}

type fleetAutoscalerSpec struct {
	FleetName string                `json:"fleetName"`
	Policy    fleetAutoscalerPolicy `json:"policy"`
	Sync      *fleetAutoscalerSync  `json:"sync,omitempty"`
}

type fleetAutoscalerPolicy struct {
	Type    string                        `json:"type"`
	Buffer  *bufferPolicy                 `json:"buffer,omitempty"`
	Webhook *admregv1.WebhookClientConfig `json:"webhook,omitempty"`
}

type bufferPolicy struct {
	MaxReplicas int32              `json:"maxReplicas"`
	MinReplicas int32              `json:"minReplicas,omitempty"`
	BufferSize  intstr.IntOrString `json:"bufferSize"`
}

type fleetAutoscalerSync struct {
	Type          string            `json:"type"`
	FixedInterval fixedIntervalSync `json:"fixedInterval"`
}

type fixedIntervalSync struct {
	Seconds int32 `json:"seconds"`
}

// oneOf reports an error unless v is one of the allowed values.
func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s %q: not one of %q", field, v, allowed)
}

// dnsLabel checks a name against the CRDs' pattern
// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ and 63 characters.
func dnsLabel(field, v string) error {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return fmt.Errorf("%s %q: %s", field, v, strings.Join(errs, "; "))
	}
	return nil
}

// intOrPercent checks a rolling-update or buffer size: an integer of at
// least 1, or a percentage from 1% to 99%.
func intOrPercent(field string, v *intstr.IntOrString) error {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntValue() < 1 {
			return fmt.Errorf("%s %d: want at least 1", field, v.IntValue())
		}
		return nil
	}
	p, ok := strings.CutSuffix(v.StrVal, "%")
	n, err := strconv.Atoi(p)
	if !ok || err != nil || n < 1 || n > 99 {
		return fmt.Errorf("%s %q: want 1%%..99%%", field, v.StrVal)
	}
	return nil
}

// validate applies the Fleet CRD schema and Agones' Fleet validation.
func (f *fleet) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(dnsLabel("metadata.name", f.Name))
	s := &f.Spec
	if s.Replicas != nil && *s.Replicas < 0 {
		add(fmt.Errorf("spec.replicas %d < 0", *s.Replicas))
	}
	add(oneOf("spec.scheduling", s.Scheduling, "", "Packed", "Distributed"))
	if st := s.Strategy; st != nil {
		add(oneOf("spec.strategy.type", string(st.Type), "", "RollingUpdate", "Recreate"))
		if ru := st.RollingUpdate; ru != nil {
			if st.Type == "Recreate" {
				add(errors.New("spec.strategy.rollingUpdate with type Recreate"))
			}
			add(intOrPercent("spec.strategy.rollingUpdate.maxSurge", ru.MaxSurge))
			add(intOrPercent("spec.strategy.rollingUpdate.maxUnavailable", ru.MaxUnavailable))
		}
	}
	for _, p := range s.Priorities {
		add(oneOf("spec.priorities.type", p.Type, "Counter", "List"))
		add(oneOf("spec.priorities.order", p.Order, "", "Ascending", "Descending"))
	}
	add(s.Template.Spec.validate("spec.template.spec"))
	return errors.Join(errs...)
}

// validate applies the GameServer spec schema.
func (g *gameServerSpec) validate(path string) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
	}
	pod := &g.Template.Spec
	if len(pod.Containers) == 0 {
		add(errors.New("template.spec.containers: at least one is required"))
	}
	names := map[string]bool{}
	for _, c := range pod.Containers {
		add(dnsLabel("container name", c.Name))
		if c.Image == "" {
			add(fmt.Errorf("container %q: image is required", c.Name))
		}
		names[c.Name] = true
	}
	switch {
	case g.Container != "":
		add(dnsLabel("container", g.Container))
		if !names[g.Container] {
			add(fmt.Errorf("container %q is not in the Pod template", g.Container))
		}
	case len(pod.Containers) > 1:
		add(errors.New("container is required when the Pod has more than one container"))
	}
	if len(g.Ports) == 0 {
		add(errors.New("ports: at least one is required (clients connect to it)"))
	}
	for i, p := range g.Ports {
		pp := fmt.Sprintf("ports[%d]", i)
		add(oneOf(pp+".portPolicy", p.PortPolicy, "", "Dynamic", "Static", "Passthrough", "None"))
		add(oneOf(pp+".protocol", string(p.Protocol), "", "UDP", "TCP", "TCPUDP"))
		switch p.PortPolicy {
		case "Passthrough":
			if p.ContainerPort != 0 {
				add(fmt.Errorf("%s: containerPort must not be set with Passthrough", pp))
			}
		default:
			if p.ContainerPort < 1 || p.ContainerPort > 65535 {
				add(fmt.Errorf("%s.containerPort %d: want 1..65535", pp, p.ContainerPort))
			}
		}
		if p.PortPolicy == "Static" && (p.HostPort < 1 || p.HostPort > 65535) {
			add(fmt.Errorf("%s.hostPort %d: required with Static, 1..65535", pp, p.HostPort))
		}
		if p.Container != nil && !names[*p.Container] {
			add(fmt.Errorf("%s.container %q is not in the Pod template", pp, *p.Container))
		}
	}
	if h := g.Health; h != nil {
		if h.PeriodSeconds < 0 || h.InitialDelaySeconds < 0 || h.FailureThreshold < 0 {
			add(fmt.Errorf("health %+v: negative", *h))
		}
	}
	if sd := g.SdkServer; sd != nil {
		add(oneOf("sdkServer.logLevel", sd.LogLevel, "", "Error", "Info", "Debug", "Trace"))
		for _, port := range []int32{sd.GRPCPort, sd.HTTPPort} {
			if port < 0 || port > 65535 {
				add(fmt.Errorf("sdkServer port %d: want 1..65535", port))
			}
		}
	}
	if e := g.Eviction; e != nil {
		add(oneOf("eviction.safe", e.Safe, "", "Always", "OnUpgrade", "Never"))
	}
	return errors.Join(errs...)
}

// validate applies the FleetAutoscaler CRD schema and Agones' policy
// validation.
func (a *fleetAutoscaler) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(dnsLabel("metadata.name", a.Name))
	add(dnsLabel("spec.fleetName", a.Spec.FleetName))
	p := &a.Spec.Policy
	add(oneOf("spec.policy.type", p.Type, "Buffer", "Webhook"))
	switch p.Type {
	case "Buffer":
		b := p.Buffer
		if b == nil || p.Webhook != nil {
			add(errors.New("spec.policy: type Buffer needs buffer, and only buffer"))
			break
		}
		if b.MaxReplicas < 1 || b.MinReplicas < 0 {
			add(fmt.Errorf("spec.policy.buffer: maxReplicas %d (want >= 1), minReplicas %d (want >= 0)", b.MaxReplicas, b.MinReplicas))
		}
		if b.MinReplicas > b.MaxReplicas {
			add(fmt.Errorf("spec.policy.buffer: minReplicas %d > maxReplicas %d", b.MinReplicas, b.MaxReplicas))
		}
		add(intOrPercent("spec.policy.buffer.bufferSize", &b.BufferSize))
		if b.BufferSize.Type == intstr.Int {
			n := int32(b.BufferSize.IntValue())
			if b.MaxReplicas < n {
				add(fmt.Errorf("spec.policy.buffer: maxReplicas %d < bufferSize %d", b.MaxReplicas, n))
			}
			if b.MinReplicas != 0 && b.MinReplicas < n {
				add(fmt.Errorf("spec.policy.buffer: minReplicas %d < bufferSize %d", b.MinReplicas, n))
			}
		} else if b.MinReplicas < 1 {
			add(errors.New("spec.policy.buffer: a percentage bufferSize needs minReplicas >= 1"))
		}
	case "Webhook":
		if p.Webhook == nil || p.Buffer != nil {
			add(errors.New("spec.policy: type Webhook needs webhook, and only webhook"))
		} else if (p.Webhook.URL == nil) == (p.Webhook.Service == nil) {
			add(errors.New("spec.policy.webhook: exactly one of url and service"))
		}
	}
	if s := a.Spec.Sync; s != nil {
		add(oneOf("spec.sync.type", s.Type, "FixedInterval"))
		if s.FixedInterval.Seconds <= 0 {
			add(fmt.Errorf("spec.sync.fixedInterval.seconds %d: want > 0", s.FixedInterval.Seconds))
		}
	}
	return errors.Join(errs...)
}
