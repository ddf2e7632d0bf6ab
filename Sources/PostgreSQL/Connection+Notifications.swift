internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

/// A notification PostgreSQL delivered to a connection that listens on
/// its channel (`NOTIFY channel, 'payload'`, or `pg_notify`), once the
/// transaction that sent it committed.
///
/// ```swift
/// for notification in try connection.receiveNotifications() { print(notification.channel, notification.payload) }
/// ```
package struct Notification: Sendable, Equatable {
    /// The channel it was sent on.
    package let channel: String
    /// Its payload (at most 7,999 bytes), empty when it has none.
    package let payload: String
    /// The process id of the session that sent it.
    package let senderPID: Int
}

// MARK: - Listening

extension Connection {
    /// Listens on `channel` from now on (`LISTEN "channel"`): the
    /// notifications sent on it wait on the connection until
    /// ``receiveNotifications()`` takes them. The channel is an identifier,
    /// quoted, never SQL.
    package func listen(_ channel: String) throws {
        try runSimple("LISTEN \"" + channel.replacing("\"", with: "\"\"") + "\"")
    }

    /// The connection's socket, to wait on (`poll`) for notifications; -1 once closed.
    package var socketDescriptor: Int32 {
        handle.map { PQsocket($0) } ?? -1
    }

    /// Reads what the server sent without waiting, and returns the
    /// notifications it holds, in the order sent. Throws when the
    /// connection is lost (the backend terminated, the socket closed).
    package func receiveNotifications() throws -> [Notification] {
        let handle = try openHandle()
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
            markBroken()
            throw connectionError()
        }
        var notifications: [Notification] = []
        while let notify = PQnotifies(handle) {
            notifications.append(
                Notification(
                    channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra),
                    senderPID: Int(notify.pointee.be_pid)))
            PQfreemem(notify)
        }
        return notifications
    }
}
