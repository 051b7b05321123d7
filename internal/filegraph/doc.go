// Package filegraph draws which files of a Go package refer to which, and
// finds the cycles among them.
//
// File A points to file B when a name used in A is declared in B: a
// package-level type, func, var or const, or a method or field of a type.
// A package whose files form no cycle reads from the bottom up: each file
// needs only the files below it. Its test holds director/ and area/ (and
// the packages under them) to that, in the product build and the leytest
// build.
package filegraph
