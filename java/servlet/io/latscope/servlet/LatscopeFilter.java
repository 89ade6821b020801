package io.latscope.servlet;

import io.latscope.Request;
import io.latscope.Requests;
import java.io.IOException;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;

/**
 * LatscopeFilter makes each servlet request a latscope.Request event around
 * the rest of the filter chain, on the thread that handles it. The route is
 * the servlet path (override {@link #route} for another). An asynchronous
 * request (startAsync) ends, for latscope, when the chain returns: its
 * later work is not in the event.
 */
public class LatscopeFilter implements Filter {
    @Override
    public void init(FilterConfig config) {
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse resp, FilterChain chain) throws IOException, ServletException {
        String route = "", traceparent = null;
        if (req instanceof HttpServletRequest) {
            HttpServletRequest h = (HttpServletRequest) req;
            route = route(h);
            traceparent = h.getHeader("traceparent");
        }
        Request r = Requests.begin(route, traceparent);
        try {
            chain.doFilter(req, resp);
        } finally {
            r.end();
        }
    }

    /** route returns the route of req: its servlet path, or "/" when empty. */
    protected String route(HttpServletRequest req) {
        String p = req.getServletPath();
        return p == null || p.isEmpty() ? "/" : p;
    }

    @Override
    public void destroy() {
    }
}
