package io.latscope;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.util.function.Function;

/**
 * HttpFilter makes each exchange of a com.sun.net.httpserver context a
 * request: a latscope.Request event around the rest of the chain, on the
 * thread that handles the exchange. Add it with
 * {@code server.createContext("/demo", handler).getFilters().add(new HttpFilter())}.
 */
public final class HttpFilter extends Filter {
    private final Function<HttpExchange, String> route;

    /** HttpFilter names each request's route by its context's path. */
    public HttpFilter() {
        this(ex -> ex.getHttpContext().getPath());
    }

    /** HttpFilter names each request's route with route. */
    public HttpFilter(Function<HttpExchange, String> route) {
        this.route = route;
    }

    @Override
    public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
        Request r = Requests.begin(route.apply(exchange), exchange.getRequestHeaders().getFirst("traceparent"));
        try {
            chain.doFilter(exchange);
        } finally {
            r.end();
        }
    }

    @Override
    public String description() {
        return "latscope: a latscope.Request JFR event per exchange";
    }
}
