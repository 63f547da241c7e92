// Package web holds the HTML views of termhost as templ components. Views
// take plain values; the browser app (assets/, built into static/dist) does
// the rest.
package web

//go:generate go tool templ generate
