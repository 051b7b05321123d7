// Package doclinks holds the check that every doc link of the module's Go
// code resolves: a bracketed name, method or package-qualified name in a
// doc comment that names nothing (a type renamed, a function gone) fails
// the test instead of rendering as plain brackets on pkg.go.dev.
package doclinks
