// Package pgdsn keeps PostgreSQL passwords out of what is printed and
// logged: Mask hides the password of a connection string, in URL and
// key/value form, and Scrub cleans a driver's error message that may echo
// it. ponder's OCA bridge and laserbrain's store (LASERBRAIN_STORE) both
// print connection strings through it.
package pgdsn
