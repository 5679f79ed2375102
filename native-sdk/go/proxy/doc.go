// Proxy users, API keys and ISP or dedicated IPs of the proxy service's management API.
package proxy
