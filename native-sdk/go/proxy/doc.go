// Package proxy exports types, functions, subpackages for provisioning proxy resources.
package proxy
