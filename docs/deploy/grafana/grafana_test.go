package grafana

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot returns the module's root: the nearest directory up from here
// holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// exported returns the metric names the Go files under root export (test
// files left out: what only a test registers is not ley's): each
// prometheus.<Kind>Opts{Name: ...} literal's name, joined to its
// Namespace and Subsystem as prometheus.BuildFQName does (with the
// _bucket, _sum and _count series of a histogram or summary), and the
// first argument of each prometheus.NewDesc. Names that are not string
// constants in the literal are not found.
func exported(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				kind, ok := promSelector(n.Type)
				if !ok || !strings.HasSuffix(kind, "Opts") {
					return true
				}
				parts := map[string]string{}
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					k, ok1 := kv.Key.(*ast.Ident)
					v, ok2 := stringLit(kv.Value)
					if ok1 && ok2 {
						parts[k.Name] = v
					}
				}
				if parts["Name"] == "" {
					return true
				}
				var fq []string
				for _, p := range []string{parts["Namespace"], parts["Subsystem"], parts["Name"]} {
					if p != "" {
						fq = append(fq, p)
					}
				}
				name := strings.Join(fq, "_")
				names[name] = true
				if kind == "HistogramOpts" || kind == "SummaryOpts" || kind == "HistogramVecOpts" || kind == "SummaryVecOpts" {
					for _, s := range []string{"_bucket", "_sum", "_count"} {
						names[name+s] = true
					}
				}
			case *ast.CallExpr:
				if fn, ok := promSelector(n.Fun); ok && fn == "NewDesc" && len(n.Args) > 0 {
					if v, ok := stringLit(n.Args[0]); ok {
						names[v] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// promSelector reports the name X of an expression prometheus.X.
func promSelector(e ast.Expr) (string, bool) {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := s.X.(*ast.Ident)
	if !ok || pkg.Name != "prometheus" {
		return "", false
	}
	return s.Sel.Name, true
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(b.Value)
	return v, err == nil
}

// keywords are PromQL's words that are not metric names where they are
// not followed by a parenthesis (as a function is): operators, modifiers,
// and the aggregations, which a grouping clause may follow ("sum by (x)
// (...)").
var keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true,
	"on": true, "ignoring": true, "group_left": true, "group_right": true, "atan2": true, "inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true, "count": true,
	"count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true}

// grouping are the keywords followed by a parenthesised list of label names.
var grouping = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// metricNames returns the metric names a PromQL expression (with Grafana's
// $variables in it) selects: every identifier that is not inside a string,
// a label matcher {...}, a range [...] or a grouping clause's label list,
// not a keyword, and not a function (followed by a parenthesis).
func metricNames(expr string) []string {
	var out []string
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '{' || c == '[':
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(expr) && expr[j] != end {
				if q := expr[j]; q == '"' || q == '\'' || q == '`' {
					for j++; j < len(expr) && expr[j] != q; j++ {
						if expr[j] == '\\' {
							j++
						}
					}
				}
				j++
			}
			i = j + 1
		case c == '$':
			j := i + 1
			if j < len(expr) && expr[j] == '{' {
				for j < len(expr) && expr[j] != '}' {
					j++
				}
				j++
			} else {
				for j < len(expr) && isIdent(expr[j]) {
					j++
				}
			}
			i = j
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(expr) && (isIdent(expr[j]) || expr[j] == '.') {
				j++ // a number or a duration: 0.99, 1e3, 5m
			}
			i = j
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\t' || expr[k] == '\n') {
				k++
			}
			switch {
			case grouping[strings.ToLower(word)]:
				if k < len(expr) && expr[k] == '(' {
					for k < len(expr) && expr[k] != ')' {
						k++
					}
					j = k + 1
				}
			case keywords[strings.ToLower(word)]:
			case k < len(expr) && expr[k] == '(':
				// a function or an aggregation
			default:
				out = append(out, word)
			}
			i = j
		default:
			i++
		}
	}
	return out
}

// TestMetricNames: the scanner finds the metric names of expressions like
// the dashboard's, and nothing else.
func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`ley_players`, []string{"ley_players"}},
		{`sum by (state) (ley_areas)`, []string{"ley_areas"}},
		{`max without(host)(ley_host_peers) and count (ley_hosts)`, []string{"ley_host_peers", "ley_hosts"}},
		{`ley_host_tick_seconds{quantile="0.99",host=~"$host"}`, []string{"ley_host_tick_seconds"}},
		{`1 / ley_config{knob="tick_rate_hz"}`, []string{"ley_config"}},
		{`sum by (type, reason) (rate(ley_host_message_refusals_total[$__rate_interval]))`, []string{"ley_host_message_refusals_total"}},
		{`histogram_quantile(0.99, sum without (instance) (rate(ley_x_bucket[5m]))) > bool 0.5`, []string{"ley_x_bucket"}},
		{`a_total / on (host) group_left (name) b_info offset 1h`, []string{"a_total", "b_info"}},
		{`label_values(ley_host_peers, host)`, []string{"ley_host_peers", "host"}},
		{`rate(ley_nope_total{reason="a}b"}[${__range}])`, []string{"ley_nope_total"}},
	}
	for _, tt := range tests {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %q; want %q", tt.expr, got, tt.want)
		}
	}
}

// dashboard is the part of Grafana's dashboard JSON that holds queries.
type dashboard struct {
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

// expr is one PromQL expression of the dashboard, and where it is.
type expr struct{ where, promql string }

func (d dashboard) exprs(t *testing.T) []expr {
	t.Helper()
	var out []expr
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for i, tg := range p.Targets {
				out = append(out, expr{where: p.Title + " #" + strconv.Itoa(i+1), promql: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Query, &s) == nil:
		case json.Unmarshal(v.Query, &q) == nil:
			s = q.Query
		default:
			t.Fatalf("variable %s: a query of neither form: %s", v.Name, v.Query)
		}
		// label_values(metric, label): the label is no metric.
		if strings.HasPrefix(s, "label_values(") {
			if i := strings.LastIndex(s, ","); i > 0 {
				s = s[:i] + ")"
			}
		}
		out = append(out, expr{where: "variable $" + v.Name, promql: s})
	}
	return out
}

// TestDashboardNamesExportedMetrics: every expression of ley.json names
// only metrics that ley's Go source exports, and the dashboard covers
// the figures an operator watches.
func TestDashboardNamesExportedMetrics(t *testing.T) {
	names := exported(t, repoRoot(t))
	for _, must := range []string{"ley_players", "ley_snapshot_writes_total"} {
		if !names[must] { // the discovery itself is broken
			t.Fatalf("the Go source exports no %s (found %d names: %v)", must, len(names), names)
		}
	}
	b, err := os.ReadFile("ley.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("ley.json: %v", err)
	}
	exprs := d.exprs(t)
	if len(exprs) == 0 {
		t.Fatal("ley.json has no PromQL expression")
	}
	used := map[string]bool{}
	for _, e := range exprs {
		if strings.TrimSpace(e.promql) == "" {
			t.Errorf("%s: an empty expression", e.where)
			continue
		}
		ms := metricNames(e.promql)
		if len(ms) == 0 {
			t.Errorf("%s: %q names no metric", e.where, e.promql)
		}
		for _, m := range ms {
			used[m] = true
			if !names[m] {
				t.Errorf("%s: %q names %s, which ley does not export", e.where, e.promql, m)
			}
		}
	}
	// What the dashboard is for (issue 26): players, Areas, tick p99,
	// snapshot writes by result, bytes, host exits, Area failures,
	// transfer outcomes, refusals.
	for _, m := range []string{"ley_players", "ley_areas", "ley_host_tick_seconds", "ley_snapshot_writes_total", "ley_host_bytes_out_total",
		"ley_host_exits_total", "ley_area_failures_total", "ley_transfers_total", "ley_join_refusals_total"} {
		if !used[m] {
			t.Errorf("the dashboard does not show %s", m)
		}
	}
}
