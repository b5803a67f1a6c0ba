package io.ehrelay.jgroups;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeoutException;

import io.ehrelay.internal.rpc.PeerChannel;
import io.ehrelay.internal.rpc.RpcCalls;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Message;
import org.jgroups.SuspectedException;
import org.jgroups.blocks.MessageDispatcher;
import org.jgroups.blocks.RequestOptions;
import org.jgroups.blocks.ResponseMode;

/**
 * One member of the channel's view as a relay peer: each relay call is a unicast request (reliable and in order
 * per sender through UNICAST3) answered by the member's {@link JGroupsTransport}. A member that leaves the view
 * fails the calls waiting on it ({@link SuspectedException}), so a state transfer moves on to another member.
 */
final class JGroupsPeerChannel extends PeerChannel implements RpcCalls {

    private static final byte[] NO_PAYLOAD = new byte[0];

    private final Address address;
    private final MessageDispatcher dispatcher;
    private final String self;
    private final int timeoutMillis;

    JGroupsPeerChannel(String endpoint, Address address, MessageDispatcher dispatcher, String self,
                       JGroupsSettings settings, ThreadFactory threads, Clock clock) {
        super(endpoint, settings.peerOutboundMaxBytes, settings.retryMaxMillis, threads, clock);
        this.address = address;
        this.dispatcher = dispatcher;
        this.self = self;
        this.timeoutMillis = settings.callTimeoutMillis;
    }

    @Override
    protected void connect() throws Exception {
        hello(self);
    }

    @Override
    protected void disconnect() {
        // JGroups keeps the connections; nothing of ours to drop
    }

    @Override
    protected boolean peerGone(Exception failure) {
        // a slow answer is not a departure: the view says who left
        return failure instanceof SuspectedException || failure instanceof IllegalStateException;
    }

    /**
     * Delivered batches wait for the member's answer (applied). Posted batches do not: JGroups delivers them
     * reliably and in order (UNICAST3) and its flow control (UFC) holds this thread back when the member falls
     * behind, so the call returns once JGroups took the message and the next batch follows without a round trip.
     * A post the member cannot take (its bound full past the timeout) is counted and logged there.
     */
    @Override
    protected void transmit(byte[] batch, boolean acknowledge) throws Exception {
        if (!acknowledge) {
            Message m = new BytesMessage(address, batch).putHeader(CallHeader.ID, new CallHeader(CallHeader.POST));
            dispatcher.sendMessage(m, new RequestOptions(ResponseMode.GET_NONE, timeoutMillis));
            return;
        }
        Replies.read(invokeOrThrow(new CallHeader(CallHeader.DELIVER), batch, callTimeoutMillis(timeoutMillis)),
                endpoint());
    }

    /**
     * As {@link #transmit(byte[], boolean)}; a post goes as the batch's pieces ({@link PiecesMessage}): the
     * message JGroups keeps until the member acknowledges it then holds the elements' value arrays, not a copy of
     * the batch.
     */
    @Override
    protected void transmit(Batch batch, boolean acknowledge) throws Exception {
        if (acknowledge) {
            transmit(batch.toByteArray(), true);
            return;
        }
        Message m = new PiecesMessage(address, batch.pieces()).putHeader(CallHeader.ID,
                new CallHeader(CallHeader.POST));
        dispatcher.sendMessage(m, new RequestOptions(ResponseMode.GET_NONE, timeoutMillis));
    }

    @Override
    protected void transferState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
            throws Exception {
        fetchThroughRelay(this, cacheName, maxChunkBytes, sink);
    }

    @Override
    public void hello(String fromEndpoint) throws IOException {
        Replies.read(invoke(new CallHeader(CallHeader.HELLO), null), endpoint());
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws IOException {
        Replies.read(invoke(new CallHeader(CallHeader.DELIVER), batch), endpoint());
    }

    @Override
    public void post(String fromEndpoint, byte[] batch) throws IOException {
        Replies.read(invoke(new CallHeader(CallHeader.POST), batch), endpoint());
    }

    @Override
    public long openState(String cacheName) throws IOException {
        CallHeader h = new CallHeader(CallHeader.OPEN_STATE);
        h.cacheName = cacheName;
        return Replies.readLong(invoke(h, null), endpoint());
    }

    @Override
    public byte[] nextState(long transferId, int maxChunkBytes) throws IOException {
        CallHeader h = new CallHeader(CallHeader.NEXT_STATE);
        h.transferId = transferId;
        h.maxChunkBytes = maxChunkBytes;
        return Replies.read(invoke(h, null), endpoint());
    }

    /** The relay calls' checked exceptions are IOExceptions: JGroups' failures are wrapped. */
    private Object invoke(CallHeader header, byte[] payload) throws IOException {
        try {
            return invokeOrThrow(header, payload, timeoutMillis);
        } catch (IOException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted calling " + endpoint());
        } catch (Exception e) {
            throw new IOException(describe(e), e);
        }
    }

    private Object invokeOrThrow(CallHeader header, byte[] payload, int timeout) throws Exception {
        Message m = new BytesMessage(address, payload == null ? NO_PAYLOAD : payload).putHeader(CallHeader.ID, header);
        try {
            return dispatcher.sendMessage(m, new RequestOptions(ResponseMode.GET_FIRST, timeout));
        } catch (TimeoutException e) {
            throw new TimeoutException("member " + endpoint() + " did not answer within " + timeout + " ms");
        }
    }

    private String describe(Exception e) {
        if (e instanceof SuspectedException) {
            return "member " + endpoint() + " left the view (suspected)";
        }
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }
}
