package io.latscope;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * DelegatingExecutor is an executor service whose life cycle (shutdown,
 * termination) is its delegate's: the wrappers of {@link Tasks#wrap} and
 * {@link ServerQueue#wrap} override only how a task is handed over.
 */
abstract class DelegatingExecutor extends AbstractExecutorService {
    final ExecutorService delegate;

    DelegatingExecutor(ExecutorService delegate) {
        this.delegate = delegate;
    }

    @Override
    public void shutdown() {
        delegate.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
        return delegate.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
        return delegate.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return delegate.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return delegate.awaitTermination(timeout, unit);
    }
}
