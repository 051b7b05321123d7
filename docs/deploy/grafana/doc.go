// Package grafana holds ley's Grafana dashboard, ley.json: a realm seen
// from its director's /metrics (players, Areas, ticks, snapshot writes,
// bytes, host exits, Area failures, portal transfers, refusals). It has
// no Go API; its test keeps the dashboard honest.
//
// # Outline
//
//   - ley.json: import it into Grafana (Dashboards, New, Import) and pick
//     the Prometheus data source that scrapes the director's --metrics
//     listener; docs/operations.md ("Dashboard") says more.
//   - TestDashboardNamesExportedMetrics parses ley.json and checks every
//     PromQL expression in it (panels' targets and the query variables)
//     against the metric names ley's Go source exports, found by the test
//     itself in the repository's files: a prometheus.*Opts literal's Name
//     (with its Namespace and Subsystem), or prometheus.NewDesc's first
//     argument. A dashboard naming a metric ley does not export fails.
//
// # Caveats
//
//   - The expressions are read by a small scanner, not Prometheus's own
//     parser (a large dependency for one test): it knows PromQL's
//     strings, label matchers, ranges, grouping clauses, functions and
//     keywords, and Grafana's $variables; whatever identifier is left is
//     a metric name.
//   - Only ley's own metrics may be named (the ley_ ones); the Go and
//     process collectors' go_* and process_* are exported too but are
//     not the dashboard's business.
package grafana
