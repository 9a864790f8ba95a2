// Package mail is the server's outgoing mail: the mails' texts in the
// recipient's language, the outbox written in the transaction of the
// change that causes a mail, and its delivery through a realm's SMTP
// server or HTTP provider.
package mail
