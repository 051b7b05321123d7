// Package blob is the format of an Area's durable state, the blob a host
// sends with each snapshot and a director stores: its types, its encoding
// and the checks a blob must pass. It imports nothing of the engine, so the
// director can check a blob before storing it without carrying the ECS;
// package persist turns an Area into a blob and back.
package blob
